"""LaTeX safety: the deny-list a LaTeX article body must pass and the document shell it goes
into (spec: reckoner.md section 3 "Articles"; upstream-facts.md 3.12, hardened).

* :func:`sanitize_latex` refuses what could make a TeX engine read or write files, run code or
  redefine what it reads (:data:`FORBIDDEN`, command names with ``@``, the ``^^`` notation,
  control characters, verbatim and file-writing environments), escapes bare ``%`` and checks
  braces and ``$``. Every LaTeX body passes it, the offline writer's too.
* :func:`latex_document` wraps a sanitized body: ``ctexart`` for Chinese, ``article`` otherwise;
  siunitx, unicode-math, the record's title and the fixed author line.
* The compile (``latexmk -xelatex``, shell escape off, paranoid file access) is not here: it runs
  a program, so it lives above the engine (:mod:`dsh_notebook.artifact.articles`).
"""

from __future__ import annotations

import re

from ...formats import latex_text
from .facts import AUTHOR, FIXED_TITLE, ArticleError

# The LaTeX deny-list. A model-written body is untrusted input to a TeX engine, which can
# read files, write files and (with shell escape) run programs; these are the commands a
# body may not contain. Sources:
#
# * UPSTREAM_FORBIDDEN: upstream's list, as it is (upstream-facts.md 3.12).
# * FORBIDDEN_EXTRA, our additions, by what they could do:
#   - read a file into the PDF or test that it exists (TeX primitives, LaTeX kernel and common
#     packages: a command of a package the shell does not load is refused all the same);
#   - write files, talk to the driver, run Lua or a shell;
#   - build or hide a command name from other tokens (\csname-like and expansion tricks), so
#     that no command of this list can be reached without being spelled out;
#   - change category codes or what TeX reads (the escape character, end of line), define or
#     redefine anything, hook code into later material, load fonts by path.
#
# Also refused, whatever the name: any command name with '@' (LaTeX's internal macros such as
# \@@input, the primitive \input; a body never has \makeatletter), the ^^ notation (^^5c is a
# backslash, \inp^^75t is \input), control characters, and \begin/\end of an environment whose
# name is not plain letters or names a command of the list (\begin{X} runs \X) or is a verbatim
# or file-writing environment. Commands are read as TeX reads them: a backslash and a run of
# letters (whatever follows), or a backslash and one other character; so \\input is a line
# break followed by the word "input", and \inputlineno is not \input.
#
# Last line of defence, for a primitive nobody thought of: the build compiles with shell escape
# off and TeX's paranoid file access (openin_any=p, openout_any=p: no absolute paths, no '..', no
# dot files), see dsh_notebook.artifact.articles.compile_latex.

UPSTREAM_FORBIDDEN = ("documentclass", "usepackage", "RequirePackage", "input", "include", "includeonly", "write",
                      "immediate", "catcode", "special", "makeatletter", "makeatother", "newcommand", "renewcommand",
                      "newenvironment", "renewenvironment", "let", "edef", "gdef", "global", "csname", "endcsname",
                      "def")

FORBIDDEN_EXTRA = (
    # read files (or test them)
    "InputIfFileExists", "IfFileExists", "openin", "closein", "read", "readline", "newread", "ifeof",
    "lstinputlisting", "verbatiminput", "VerbatimInput", "BVerbatimInput", "LVerbatimInput", "inputminted",
    "import", "subimport", "inputfrom", "subinputfrom", "includefrom", "subincludefrom", "includegraphics",
    "includepdf", "includestandalone", "includesvg", "bibliography", "addbibresource", "LoadClass",
    "LoadClassWithOptions", "RequirePackageWithOptions", "pdffiledump", "filedump", "pdfmdfivesum", "mdfivesum",
    "pdffilesize", "filesize", "pdffilemoddate", "filemoddate", "pdfximage", "pdfobj", "XeTeXpicfile",
    "XeTeXpdffile", "XeTeXinputencoding", "XeTeXdefaultencoding", "endinput",
    # write files, talk to the driver, run code
    "openout", "closeout", "newwrite", "filecontents", "newfilecontents", "addtocontents", "addcontentsline",
    "pdfliteral", "directlua", "latelua", "luaexec", "luadirect", "luacode", "ShellEscape", "shellescape",
    # build a command name from other tokens, or control expansion
    "expandafter", "noexpand", "unexpanded", "detokenize", "scantokens", "scantextokens", "string",
    "ifcsname", "begincsname", "lastnamedcs", "UseName", "ExpandArgs", "use", "primitive", "pdfprimitive",
    # category codes and what TeX reads
    "lccode", "uccode", "sfcode", "mathcode", "delcode", "lowercase", "uppercase", "endlinechar", "newlinechar",
    "escapechar", "ExplSyntaxOn", "ExplSyntaxOff", "obeyspaces", "obeylines", "verb", "everyeof",
    # define, redefine, hook
    "xdef", "futurelet", "chardef", "mathchardef", "countdef", "dimendef", "skipdef", "muskipdef", "toksdef",
    "providecommand", "DeclareRobustCommand", "NewDocumentCommand", "RenewDocumentCommand",
    "ProvideDocumentCommand", "DeclareDocumentCommand", "NewExpandableDocumentCommand",
    "RenewExpandableDocumentCommand", "ProvideExpandableDocumentCommand", "DeclareExpandableDocumentCommand",
    "NewDocumentEnvironment", "RenewDocumentEnvironment", "ProvideDocumentEnvironment",
    "DeclareDocumentEnvironment", "NewCommandCopy", "RenewCommandCopy", "DeclareCommandCopy",
    "NewEnvironmentCopy", "RenewEnvironmentCopy", "DeclareEnvironmentCopy", "DeclareTextCommand",
    "DeclareSIUnit", "DeclareSIPrefix", "DeclareSIPower", "DeclareSIQualifier", "DeclareMathOperator",
    "DeclareMathSymbol", "DeclareMathAlphabet", "SetMathAlphabet", "DeclareSymbolFont", "SetSymbolFont",
    "DeclareFontFamily", "DeclareFontShape", "DeclareFixedFont", "DeclareTextFontCommand", "DeclareOldFontCommand",
    "DeclareUnicodeCharacter", "newunicodechar", "protected", "long", "outer", "afterassignment", "aftergroup",
    "everypar", "everymath", "everydisplay", "everyhbox", "everyvbox", "everycr", "everyjob", "output",
    "AtBeginDocument", "AtEndDocument", "AddToHook", "AddToHookNext",
    # load fonts (by path)
    "font", "fontspec", "setmainfont", "setsansfont", "setmonofont", "setmathfont", "setmathrm", "setmathsf",
    "setmathtt", "setboldmathrm", "newfontfamily", "newfontface", "setfontfamily", "setfontface",
    "renewfontfamily", "renewfontface", "defaultfontfeatures", "addfontfeature", "addfontfeatures",
)

#: Every command a LaTeX body may not contain (upstream's list, then ours; see above).
FORBIDDEN = UPSTREAM_FORBIDDEN + tuple(c for c in FORBIDDEN_EXTRA if c not in UPSTREAM_FORBIDDEN)

#: Environments refused besides those named by FORBIDDEN: they change category codes (verbatim
#: material) or write files.
FORBIDDEN_ENVIRONMENTS = ("filecontents", "verbatim", "Verbatim", "BVerbatim", "LVerbatim", "lstlisting", "minted",
                          "comment", "alltt", "luacode", "luacode*", "tikzexternal")

_FORBIDDEN_SET = frozenset(FORBIDDEN)
_CONTROL = re.compile(r"\\([A-Za-z@]+|[\s\S])")  # TeX's reading of a command (@ read as a letter, to refuse it)
_BAD_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _latex_problem(body: str) -> str | None:
    """What makes ``body`` unsafe for the TeX engine (see the deny-list above), or None."""
    if "^^" in body:
        return ("the LaTeX body uses the ^^ notation (a character by its code, which can spell a forbidden "
                "command), which an article body may not contain")
    bad = _BAD_CHARS.search(body)
    if bad:
        return f"the LaTeX body contains the control character U+{ord(bad.group(0)):04X}"
    for m in _CONTROL.finditer(body):
        name = m.group(1)
        if name in _FORBIDDEN_SET:
            return f"the LaTeX body uses \\{name}, which an article body may not contain"
        if "@" in name:
            return (f"the LaTeX body uses \\{name}: a command name with '@' (an internal macro) may not appear in "
                    "an article body")
        if name in ("begin", "end"):
            env = re.match(r"[ \t]*(?:\n[ \t]*)?\{([^{}]*)\}", body[m.end():])
            if env is None:
                return f"the LaTeX body uses \\{name} without an environment name in braces"
            full = env.group(1)
            if full == "document":
                return "the LaTeX body contains a document environment; give the body only"
            if not re.fullmatch(r"[A-Za-z]+\*?", full):
                return f"the LaTeX body uses the environment {{{full}}}: environment names are plain letters"
            plain = full.rstrip("*")
            if plain in _FORBIDDEN_SET or f"end{plain}" in _FORBIDDEN_SET or full in FORBIDDEN_ENVIRONMENTS \
                    or plain in FORBIDDEN_ENVIRONMENTS:
                return f"the LaTeX body uses the environment {{{full}}}, which an article body may not contain"
    return None


def sanitize_latex(body: str) -> str:
    """Upstream's LaTeX body checks, hardened: refuse the commands of :data:`FORBIDDEN` (and
    command names with ``@``, the ``^^`` notation, control characters, a document, verbatim or
    file-writing environment), escape bare ``%``, require balanced braces and an even number of
    ``$``. Returns the body with ``%`` escaped; raises :class:`ArticleError` naming the problem."""
    if not body or not body.strip():
        raise ArticleError("the LaTeX body is empty")
    problem = _latex_problem(body)
    if problem:
        raise ArticleError(problem)
    body = re.sub(r"(?<!\\)%", r"\\%", body)
    bare = re.sub(r"\\.", "", body)
    if bare.count("{") != bare.count("}"):
        raise ArticleError(f"the LaTeX body has {bare.count('{')} '{{' but {bare.count('}')} '}}'")
    if bare.count("$") % 2:
        raise ArticleError("the LaTeX body has an odd number of '$' (an unclosed inline formula)")
    return body


def latex_document(body: str, language: str, title: str = FIXED_TITLE) -> str:
    """The shell around a sanitized body: ``ctexart`` for Chinese, ``article`` otherwise; its
    ``\\title`` is *title* (the record's title, escaped)."""
    if language == "zh-CN":
        head = [r"\documentclass{ctexart}", r"\usepackage{amsmath}", r"\usepackage{siunitx}",
                r"\usepackage{unicode-math}"]
    else:
        head = [r"\documentclass{article}", r"\usepackage{fontspec}", r"\usepackage{amsmath}",
                r"\usepackage{siunitx}", r"\usepackage{unicode-math}"]
    return "\n".join(["% !TeX program = xelatex", *head, rf"\title{{{latex_text(title)}}}", rf"\author{{{AUTHOR}}}",
                      r"\date{}", r"\begin{document}", r"\maketitle", "", body.rstrip(), "", r"\end{document}", ""])
