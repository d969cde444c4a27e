"""The model article writer (spec: upstream-facts.md 3.12; the seam is
:class:`dsh_notebook.reckoner.articles.ModelWriter`).

* One :meth:`ChatClient.complete` call per article: the system message is
  :func:`~.article_prompt.writer_system_prompt` (prompt version
  :data:`~.article_prompt.WRITER_PROMPT_VERSION`), the user message
  :func:`~.article_prompt.writer_prompt` (the record's facts, numbers cut, no record id).
* The reply is returned as written, without a code fence around it. It is not trusted:
  :func:`~dsh_notebook.artifact.articles.write_article` checks it and saves the offline
  article instead, with the reason, when the check fails or this writer raises (an
  :class:`~dsh_notebook.errors.LLMError` such as ``MISSING_CREDENTIAL``).
"""

from __future__ import annotations

from ..errors import PROTOCOL, LLMError
from ..reckoner.articles import ArticleFacts, strip_fence
from .article_prompt import writer_prompt, writer_system_prompt
from .client import ChatClient, ChatResult


class ModelArticleWriter:
    """``ModelArticleWriter(client=None, model=None, timeout=180)``: writes an article body
    with one model call. Without ``client`` a :class:`ChatClient` for ``model`` (default: the
    settings' default model) is made at the first call and closed after it, so settings and
    credential errors surface as the writer's failure (and so as the offline fallback's
    reason). ``last`` holds the last :class:`ChatResult`."""

    name = "model"

    def __init__(self, client: ChatClient | None = None, model: str | None = None, timeout: float = 180.0):
        self.client = client
        self.model = model
        self.timeout = timeout
        self.last: ChatResult | None = None

    @property
    def model_id(self) -> str | None:
        """The model that wrote the last body (or the requested one before any call)."""
        if self.last is not None:
            return self.last.model
        if self.client is not None:
            return self.client.model.id
        return self.model

    def messages(self, f: ArticleFacts, fmt: str, language: str) -> list[dict]:
        """The request's messages (no I/O)."""
        return [{"role": "system", "content": writer_system_prompt(fmt, language)},
                {"role": "user", "content": writer_prompt(f, fmt, language)}]

    def write_body(self, f: ArticleFacts, fmt: str, language: str) -> str:
        """The model's article body for ``fmt`` in ``language``. Raises :class:`LLMError`:
        the client's codes, or ``PROTOCOL`` for an empty or cut-off reply."""
        messages = self.messages(f, fmt, language)
        own = self.client is None
        client = self.client or ChatClient(model=self.model, timeout=self.timeout)
        try:
            result = client.complete(messages, stream=True)
        finally:
            if own:
                client.close()
        self.last = result
        if result.finish_reason == "length":
            raise LLMError(PROTOCOL, "the model's article was cut off at its token limit (finish_reason 'length')")
        body = strip_fence(result.text).strip()
        if not body:
            raise LLMError(PROTOCOL, "the model answered with an empty article")
        return body + "\n"
