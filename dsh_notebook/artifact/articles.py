"""Articles as files beside the notebook, and their PDF build (spec: reckoner.md section 3
"Articles"; upstream-facts.md 3.12). The engine (:mod:`dsh_notebook.reckoner.articles`) gives
the facts, the body and its checks; this module writes files and runs a program, so it lives
above the engine.

* :func:`write_article`: Markdown flat as ``<name>.md``; LaTeX in ``<name>/<name>.tex``, the
  body sanitized and put into the document shell; with ``compile``, the PDF beside it.
* :func:`compile_latex`: ``latexmk -xelatex`` (:data:`LATEXMK_COMMAND`) in the article's folder,
  defence in depth behind the sanitizer: shell escape off, TeX's paranoid file access
  (:data:`TEX_ENVIRONMENT`), no latexmk rc file; a missing tool or a failed run is an
  :class:`~dsh_notebook.reckoner.articles.ArticleError` naming what to install or the log's tail.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..reckoner.articles import (
    FORMATS,
    ArticleError,
    ArticleWriter,
    article_body,
    facts,
    latex_document,
    resolve_language,
    sanitize_latex,
)
from ..reckoner.records import Record
from ..storage import atomic_write_text


@dataclass
class ArticleResult:
    """What :func:`write_article` wrote: ``writer`` is the name of the writer whose body was
    saved (``"offline"`` or ``"model"``); ``fallback_reason`` says why another writer's body
    was not used (``None`` when the requested writer's body was saved)."""

    path: Path  # the .md or .tex written
    pdf: Path | None = None
    language: str = "en"
    writer: str = "offline"
    fallback_reason: str | None = None


def write_article(record: Record | str | Path, out_dir: str | os.PathLike[str], fmt: str = "md", language: str = "auto",
                  compile: bool = False, name: str | None = None, writer: ArticleWriter | None = None) -> ArticleResult:
    """Write a closed record's article into ``out_dir``: Markdown flat as ``<name>.md``;
    LaTeX in ``<name>/<name>.tex`` (the folder also receives the PDF when ``compile``).

    ``writer`` defaults to the offline writer. Another writer (a
    :class:`~dsh_notebook.reckoner.articles.ModelWriter`) is checked by
    :func:`~dsh_notebook.reckoner.articles.check_article`; when it raises or fails the check, the
    offline body is saved and ``result.fallback_reason`` says why (see
    :func:`~dsh_notebook.reckoner.articles.article_body`).

    Raises :class:`ArticleError` (open record, bad format or language, unsafe LaTeX, a
    missing ``latexmk``/``xelatex`` for ``compile``: the ``.tex`` is written first)."""
    if fmt not in FORMATS:
        raise ArticleError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if compile and fmt != "latex":
        raise ArticleError("only LaTeX articles are compiled (use --format latex)")
    f = facts(record)
    lang = resolve_language(f, language)
    if name is not None and not name.strip():
        raise ArticleError("the file name is empty; give a name or leave --name out")
    # The whole id (upstream takes its first 8 characters, but ids are millisecond clocks,
    # so records made within a few minutes would overwrite each other's article).
    stem = re.sub(r"\.(md|tex)$", "", name or f"reckoner-{f.record_id}") or "reckoner-article"
    if "/" in stem or "\\" in stem or stem.startswith("."):
        raise ArticleError(f"the file name {stem!r} must be a plain name, not a path")
    out_dir = Path(out_dir)
    body, used, reason = article_body(f, fmt, lang, writer)

    if fmt == "md":
        path = out_dir / f"{stem}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, body)
        return ArticleResult(path, None, lang, used, reason)
    doc = latex_document(sanitize_latex(body), lang, f.title)
    folder = out_dir / stem
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.tex"
    atomic_write_text(path, doc)
    pdf = compile_latex(path, lang) if compile else None
    return ArticleResult(path, pdf, lang, used, reason)


#: What ``compile_latex`` runs in the article's folder (then the ``.tex`` file's name).
LATEXMK_COMMAND = ("latexmk", "-norc", "-xelatex", "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error")

#: Environment set for the TeX run: kpathsea's paranoid file access (no absolute paths, no
#: '..', no dot files, for reading and for writing) and no shell escape.
TEX_ENVIRONMENT = {"openin_any": "p", "openout_any": "p", "shell_escape": "f"}


def compile_latex(path: Path, language: str = "en", timeout: float = 600) -> Path:
    """Build the PDF of the ``.tex`` file ``path`` in its folder with ``latexmk -xelatex`` and
    return it. Defence in depth behind
    :func:`~dsh_notebook.reckoner.articles.sanitize_latex`: shell escape is off
    (``-no-shell-escape``, ``shell_escape=f``), TeX may read and write only relative names
    without ``..`` or a leading dot (``openin_any=p``, ``openout_any=p``; ``TEXMFOUTPUT``,
    which would widen that, is removed), and no latexmk rc file is read (``-norc``: a
    ``latexmkrc`` in the folder would be Perl code). Raises :class:`ArticleError`: a missing
    ``latexmk``/``xelatex`` (or ``ctexart`` for a Chinese article), or a failed run (the
    source is kept)."""
    path = Path(path)
    folder = path.parent
    missing = [tool for tool in ("latexmk", "xelatex") if shutil.which(tool) is None]
    if not missing and language == "zh-CN" and shutil.which("kpsewhich"):
        found = subprocess.run(["kpsewhich", "ctexart.cls"], capture_output=True, text=True, check=False).stdout.strip()
        if not found:
            raise ArticleError("--compile of a Chinese article needs the ctex LaTeX package (Debian: apt-get "
                               f"install texlive-lang-chinese); the LaTeX source was written to {path}")
    if missing:
        raise ArticleError(f"--compile needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
                           f"not installed (Debian: apt-get install latexmk texlive-xetex); the LaTeX source "
                           f"was written to {path}")
    env = {k: v for k, v in os.environ.items() if k != "TEXMFOUTPUT"}
    env.update(TEX_ENVIRONMENT)
    run = subprocess.run([*LATEXMK_COMMAND, path.name], cwd=folder, env=env, capture_output=True, text=True,
                         timeout=timeout, check=False)
    pdf = path.with_suffix(".pdf")
    if run.returncode != 0 or not pdf.exists():
        tail = "\n".join((run.stdout or "").splitlines()[-8:])
        raise ArticleError(f"latexmk failed (exit {run.returncode}); the LaTeX source is kept at {path}\n{tail}")
    return pdf
