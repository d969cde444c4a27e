"""Articles: a closed record written up as a stand-alone technical note (spec: reckoner.md
section 3; upstream-facts.md 3.12). The engine's part, pure Python: no model, no program run.

One job per module:

* :mod:`.facts`: what a writer may use from a closed record (:func:`facts`), numbers cut as
  upstream does (:func:`cut`) and values as the articles print them (:func:`shown_value`);
* :mod:`.offline`: the writers' interface and the deterministic :class:`OfflineWriter`
  (Jinja2 templates);
* :mod:`.escape`: literal text in Markdown and LaTeX;
* :mod:`.latex`: LaTeX safety (:func:`sanitize_latex`, the deny-list) and the document shell;
* :mod:`.check`: the check of a model writer's article (:func:`check_article`, the number rule)
  and the choice of the body saved (:func:`article_body`).

Elsewhere, above the engine: the model writer's prompt (:mod:`dsh_notebook.llm.article_prompt`),
the model writer (:mod:`dsh_notebook.llm.writer`), and the files with the PDF build
(:func:`dsh_notebook.artifact.articles.write_article`, ``latexmk``).
"""

from .check import (
    MAX_ARTICLE_CHARS,
    WrittenNumber,
    allowed_numbers,
    article_body,
    check_article,
    result_numbers,
    strip_fence,
    written_numbers,
)
from .facts import (
    AUTHOR,
    FIXED_TITLE,
    FORMATS,
    LANGUAGES,
    ArticleError,
    ArticleFacts,
    Condition,
    Lookup,
    Message,
    Refusal,
    Step,
    cut,
    cut_value,
    facts,
    number_text,
    resolve_language,
    shown_as,
    shown_value,
)
from .latex import (
    FORBIDDEN,
    FORBIDDEN_ENVIRONMENTS,
    FORBIDDEN_EXTRA,
    UPSTREAM_FORBIDDEN,
    latex_document,
    sanitize_latex,
)
from .offline import ArticleWriter, ModelWriter, OfflineWriter

__all__ = [
    "AUTHOR",
    "FIXED_TITLE",
    "FORBIDDEN",
    "FORBIDDEN_ENVIRONMENTS",
    "FORBIDDEN_EXTRA",
    "FORMATS",
    "LANGUAGES",
    "MAX_ARTICLE_CHARS",
    "UPSTREAM_FORBIDDEN",
    "ArticleError",
    "ArticleFacts",
    "ArticleWriter",
    "Condition",
    "Lookup",
    "Message",
    "ModelWriter",
    "OfflineWriter",
    "Refusal",
    "Step",
    "WrittenNumber",
    "allowed_numbers",
    "article_body",
    "check_article",
    "cut",
    "cut_value",
    "facts",
    "latex_document",
    "number_text",
    "resolve_language",
    "result_numbers",
    "sanitize_latex",
    "shown_as",
    "shown_value",
    "strip_fence",
    "written_numbers",
]
