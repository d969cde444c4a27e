"""The check of a model writer's article, and the choice of the body saved (spec: reckoner.md
section 3 "Articles"; upstream-facts.md 3.12).

* A model's article is untrusted: :func:`check_article` lists what is wrong with it (the number
  rule below, the length, the fixed title and author lines, Markdown without HTML, images or
  foreign links, a LaTeX body that passes :func:`~.latex.sanitize_latex`, no product name, record
  id, timestamp or author's note); an empty list means it may be saved.
* :func:`article_body` decides: the offline writer's body is trusted; another writer's body is
  used only when the check finds nothing, else the offline body is used and the reason given.
* :func:`result_numbers` lists the results as the offline writer prints them (for tests and
  readers checking that an article carries every result).
"""

from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...formats import FROM_SUPERSCRIPTS, markdown_text
from .. import display
from .. import grammar as G
from .. import shown_units as SU
from ..errors import EngineError
from ..values import Sig, parse_tagged
from .facts import AUTHOR, FORMATS, ArticleError, ArticleFacts, Message, Step, cut, cut_value, number_text, shown_as
from .latex import sanitize_latex
from .offline import ArticleWriter, OfflineWriter

# The number rule of check_article, in one place:
#
# * A number is a run of digits with an optional decimal part and thousands groups ("22,413,969",
#   "22\,413", thin spaces), optionally scaled by a power of ten in any common spelling
#   ("3.3006e-6", "3.3006\times10^{-6}", "3.3006 × 10⁻⁶", "\SI{3.3006e-6}{...}", a bare
#   "10^{-6}"). Signs are ignored: magnitudes are compared.
# * It is accepted when it equals (to 1e-12 relative) a record number: a value of a condition,
#   a substituted variable or a step result, either after the cut or at full precision (also
#   the parts of a complex value and the length of an array); a constant of a step formula; a
#   number written in the record's own prose (title, visible messages, closing; lookups'
#   questions and answers when the facts have them). Rounding further is not accepted.
# * A number directly followed by an SI-prefixed unit (mΩ, µF, kPa, \milli\ohm, ...) is also
#   accepted when it is such a number times 10^(3k), k = -4..4: the unit the question used.
# * Not numbers: digits inside words and names (R1, d36, H2O, ω0), subscripts (R_1, _{...}),
#   exponents (m^2, ^{-1}, superscript digits), URLs, \label/\ref arguments, spacing lengths.
#   An integer from 1 to max(10, highest step seq) is an ordinal, not a value, where it numbers
#   a list item, a heading or a step ("Step 3", "3 calculations", "第 3 步", "3 步").

_NORMALIZE = str.maketrans({**{chr(0xFF10 + i): str(i) for i in range(10)}, "−": "-"})
_GROUP = r"(?:,|\\,|\{,\}|\u2009|\u202f)"
_MANT = rf"(?:[0-9]{{1,3}}(?:{_GROUP}[0-9]{{3}})+(?![0-9])(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_POW = r"10\s*(?:\^\s*\{\s*(?P<G>[-+]?\s*[0-9]+)\s*\}|\^\s*(?P<Gb>[-+]?[0-9]+)|(?P<Gu>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
_TOKEN = re.compile(
    r"(?P<word>\\?[A-Za-z\u0370-\u03ffµ][A-Za-z\u0370-\u03ffµ0-9]*)"
    r"|(?P<exp>\^(?:\{\})?\s*\{?\s*[-+]?\s*[0-9.]+\s*\}?)"
    rf"|(?P<sci>(?P<sm>{_MANT})\s*(?:×|\\times|\\cdot|·|⋅|\*|x)\s*{_POW.replace('G', 'se')})"
    rf"|(?P<enot>(?P<em>{_MANT})[eE](?P<ee>[-+]?[0-9]+))"
    rf"|(?P<pow>{_POW.replace('G', 'pe')})"
    rf"|(?P<plain>{_MANT})"
)
_PREFIX_MACROS = {"milli": "m", "micro": "µ", "mu": "µ", "nano": "n", "pico": "p", "femto": "f", "kilo": "k",
                  "mega": "M", "giga": "G", "tera": "T", "peta": "P"}
_UNIT_MACROS = {"ohm": "Ω", "Omega": "Ω", "farad": "F", "henry": "H", "volt": "V", "ampere": "A", "second": "s",
                "hertz": "Hz", "watt": "W", "metre": "m", "meter": "m", "gram": "g", "joule": "J", "newton": "N",
                "pascal": "Pa", "coulomb": "C", "siemens": "S", "tesla": "T", "weber": "Wb", "litre": "L",
                "liter": "L", "kelvin": "K", "mole": "mol", "electronvolt": "eV", "bar": "bar"}
_PREFIXED_UNIT = re.compile(r"[kMGTPmµμunpf](?:mol|Hz|Pa|Wb|eV|Wh|bar|cd|[mgsAKV\u03a9\u2126FHWJNCSTLl])(?![A-Za-z])")
_ORDINAL_BEFORE = re.compile(  # a heading's number, a step or equation number
    r"(?:(?:^|\n)[ \t]*#{1,6}[ \t]*|\\(?:sub)*section\*?\{\s*|\\tag\{\s*"
    r"|(?:\b(?:steps?|calculations?|equations?|eqs?\.|parts?|stages?|sections?|items?)|第|步骤|公式|式)\s*\(?\s*)$",
    re.IGNORECASE)
_LIST_MARKER = re.compile(r"(?:^|\n)[ \t>]*(?:[*+-][ \t]+)?(?:\\item\s*)?$")  # then "1." or "1)" or "1、"
_ORDINAL_AFTER = re.compile(r"\s*(?:steps?|calculations?|equations?|parts?|stages?|步|个|项|次|条|式)", re.IGNORECASE)


@dataclass
class WrittenNumber:
    """One number found in a text: its characters, its value, where it is, and whether it is
    an ordinal or is followed by an SI-prefixed unit."""

    text: str
    value: float
    start: int
    end: int
    ordinal: bool = False
    prefixed_unit: bool = False


def _blank(text: str, pattern: str, flags: int = 0) -> str:
    """``text`` with every match of ``pattern`` replaced by as many spaces (positions kept)."""
    return re.sub(pattern, lambda m: " " * len(m.group(0)), text, flags=flags)


def _blank_subscripts(text: str) -> str:
    out = list(text)
    i = 0
    while True:
        i = text.find("_{", i)
        if i < 0:
            break
        depth, j = 0, i + 1
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        for k in range(i, min(j + 1, len(text))):
            out[k] = " "
        i = j + 1
    return _blank("".join(out), r"_[A-Za-z0-9]+")


def _prepare(text: str) -> str:
    """The text as the scanner reads it: same length, non-values blanked out."""
    text = text.translate(_NORMALIZE)
    text = _blank(text, r"https?://[^\s)\]}>]+")
    text = _blank(text, r"\\(?:label|ref|eqref|cite|url|href|vspace|hspace)\*?\{[^{}]*\}")
    text = _blank(text, r"\\\\\[[^\]]*\]")
    return _blank_subscripts(text)


def _unit_follows(after: str) -> bool:
    def macro(m: re.Match) -> str:
        name = m.group(1)
        return _PREFIX_MACROS.get(name) or _UNIT_MACROS.get(name) or ""

    s = re.sub(r"\\([A-Za-z]+)\s*", macro, after)  # TeX drops the spaces after a control word
    s = re.sub(r"\\[,;:! ]|[{}~]", "", s).lstrip()
    return bool(_PREFIXED_UNIT.match(s))


def _value_of(m: re.Match) -> float:
    def mant(s: str) -> str:
        return re.sub(_GROUP, "", s)

    def exp(prefix: str) -> str:
        e = m.group(prefix) or m.group(prefix + "b") or (m.group(prefix + "u") or "").translate(FROM_SUPERSCRIPTS)
        return re.sub(r"\s", "", e)

    if m.group("sci"):
        return abs(float(f"{mant(m.group('sm'))}e{exp('se')}"))
    if m.group("enot"):
        return abs(float(f"{mant(m.group('em'))}e{m.group('ee')}"))
    if m.group("pow"):
        return abs(float(f"1e{exp('pe')}"))
    return abs(float(mant(m.group("plain"))))


def written_numbers(text: str, ordinal_max: int = 10) -> list[WrittenNumber]:
    """Every number written in ``text`` (Markdown, LaTeX or plain prose), by the rule above."""
    text = _prepare(text)
    out = []
    for m in _TOKEN.finditer(text):
        if m.group("word") or m.group("exp"):
            continue
        try:
            value = _value_of(m)
        except (ValueError, OverflowError):
            continue
        w = WrittenNumber(m.group(0), value, m.start(), m.end())
        if m.group("plain") and re.fullmatch(r"[0-9]+\.?", w.text) and 1 <= value <= ordinal_max:
            before = text[max(0, m.start() - 40):m.start()]
            if m.start() <= 40:
                before = "\n" + before
            marker = w.text.endswith(".") or text.startswith((")", "、"), m.end())
            w.ordinal = bool(_ORDINAL_BEFORE.search(before) or _ORDINAL_AFTER.match(text, m.end())
                             or (marker and _LIST_MARKER.search(before)))
        w.prefixed_unit = _unit_follows(text[m.end():m.end() + 48])
        out.append(w)
    return out


def _leaves(obj: object, out: list[float]) -> None:
    """Numbers of a stored JSON value (``dim`` skipped; a list also gives its length)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k != "dim":
                _leaves(v, out)
    elif isinstance(obj, list):
        out.append(float(len(obj)))
        for v in obj:
            _leaves(v, out)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool) and math.isfinite(obj):
        out.append(float(obj))


def _shown(stored: object, out: list[float]) -> None:
    """Numbers of a stored value as a writer is shown them: the parsed value of the cut form
    (real and imaginary parts of a polar value, array elements)."""
    try:
        v = parse_tagged(cut_value(stored))
    except (EngineError, ValueError, TypeError, KeyError):  # a malformed row: its leaves still count
        return

    def walk(mag: Any, sig: Sig) -> None:
        if sig.kind == "object":
            for n, s in sig.fields:
                walk(mag[n], s)
            return
        items = mag.ravel().tolist() if hasattr(mag, "ravel") else [mag]
        if sig.temp in ("degC", "degF"):  # a point is also written as its reading on its scale
            exact = parse_tagged(stored).mag if isinstance(stored, dict) and "object" not in stored else mag
            items += [cut(x) for x in np.ravel(display.on_scale(exact, sig.temp)).tolist()]
        for x in items:
            for part in ((x.real, x.imag) if isinstance(x, complex) else (x,)):
                if math.isfinite(part):
                    out.append(float(part))

    walk(v.mag, v.sig)


def _formula_constants(formula: str, out: list[float]) -> None:
    try:
        stack = [G.parse(formula).tree]
    except (EngineError, ValueError):  # not a formula the grammar reads: its written numbers still count
        stack = []
    while stack:
        n = stack.pop()
        if isinstance(n, G.Num):
            out += [n.value.real, n.value.imag] if isinstance(n.value, complex) else [float(n.value)]
        stack.extend(G._children(n))
    out += [w.value for w in written_numbers(formula.replace("@", " ").replace("$", " "), 0)]


def _lookup_texts(f: ArticleFacts) -> list[str]:
    """Questions and answers of the facts' lookups, when the facts carry them."""
    texts = []
    for lk in getattr(f, "lookups", None) or []:
        get = lk.get if isinstance(lk, dict) else (lambda k, _lk=lk: getattr(_lk, k, None))
        for key in ("question", "answer"):
            value = get(key)
            if value is not None:
                texts.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return texts


def allowed_numbers(f: ArticleFacts) -> list[float]:
    """The magnitudes an article of ``f`` may write (see the rule above), sorted."""
    raw: list[float] = []
    displayed: list[str] = []  # values as the notebook shows them in their display units (issue 18)
    for c in f.conditions:
        _leaves(c.value, raw)
        _shown(c.value, raw)
        displayed.append(shown_as(c.value, c.unit))
    for item in f.items:
        if isinstance(item, Step):
            for v in [*item.vars.values(), item.result]:
                _leaves(v, raw)
                _shown(v, raw)
            displayed += [shown_as(v, item.var_units.get(n)) for n, v in item.vars.items()]
            displayed.append(shown_as(item.result, item.unit))
            _formula_constants(item.formula, raw)
    values = {abs(x) for x in raw} | {abs(cut(x)) for x in raw}
    for text in displayed:
        values |= {abs(w.value) for w in written_numbers(text, 0)}
    prose = [f.title, f.closing or "", *(m.text for m in f.items if isinstance(m, Message) and not m.hide),
             *_lookup_texts(f), *(f"row {r.seq}: {r.error}" for r in f.refusals)]  # a refusal is quoted as written
    for text in prose:
        values |= {w.value for w in written_numbers(text, 0)}
    return sorted(values)


def _near(x: float, allowed: list[float]) -> float | None:
    """The allowed number equal to ``x`` (relative 1e-12), else None."""
    i = bisect.bisect_left(allowed, x)
    for j in (i - 1, i, i + 1):
        if 0 <= j < len(allowed) and math.isclose(x, allowed[j], rel_tol=1e-12, abs_tol=0.0):
            return allowed[j]
    return None


def _closest(x: float, allowed: list[float]) -> float | None:
    if not allowed:
        return None
    return min(allowed, key=lambda a: abs(math.log10(a) - math.log10(x)) if a > 0 and x > 0 else abs(a - x))


def _snippet(text: str, w: WrittenNumber) -> str:
    left = text[max(0, w.start - 24):w.start].rsplit("\n", maxsplit=1)[-1]
    right = text[w.end:w.end + 24].split("\n", maxsplit=1)[0]
    return f"...{left}{w.text}{right}...".strip()


#: The longest article body a writer may return (characters).
MAX_ARTICLE_CHARS = 100_000

# What a Markdown article may not contain: a record holds no HTML, no images and no URLs but
# its lookups' sources, so a model article may not add any (no script, no tracking image, no
# external resource of any kind):
#
# * no raw HTML: no '<' directly followed by a letter, '/', '!' or '?' (tags, comments,
#   declarations, autolinks such as <https://...>; write a comparison as "a < b");
# * no images at all ('![alt](...)', '![alt][ref]');
# * a link's destination ('[text](dest)', '[ref]: dest') either has no URL scheme and is not
#   protocol-relative ('#part', 'notes.md'), or is an https URL equal to a source of one of the
#   record's lookups (ArticleFacts.lookups); HTML entities and backslash escapes are decoded
#   and white space is dropped before the scheme is read, as a browser would;
# * a URL written as text ('scheme://...', 'www....') is one of those sources;
# * no 'javascript:' anywhere.

_HTML = re.compile(r"<[A-Za-z/!?]")
_IMAGE = re.compile(r"!\[[^\]\n]*\]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_BARE_URL = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.\-]*://|\bwww\.)[^\s<>]*")
_JAVASCRIPT = re.compile(r"(?i)j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t\s*:")
_URL_TAIL = set(")].,;:!?*_'\"\\")


def _lookup_sources(f: ArticleFacts) -> list[str]:
    """The source URLs of the facts' lookups, when the facts carry them."""
    out = []
    for lk in getattr(f, "lookups", None) or []:
        sources = lk.get("sources") if isinstance(lk, dict) else getattr(lk, "sources", None)
        out += [s for s in sources or [] if isinstance(s, str) and s]
    return out


def _link_destinations(text: str) -> list[str]:
    """The destinations of inline links ('](dest'; balanced parentheses, '<...>') and of
    reference definitions ('[ref]: dest'), as written."""
    out = []
    for m in re.finditer(r"\]\(", text):
        i = m.end()
        while i < len(text) and text[i] in " \t\n":
            i += 1
        if text.startswith("<", i):
            j = text.find(">", i)
            out.append(text[i + 1:j if j >= 0 else len(text)])
            continue
        depth, j = 0, i
        while j < len(text):
            ch = text[j]
            if ch == "\\":
                j += 2
                continue
            if ch.isspace() or (ch == ")" and depth == 0):
                break
            depth += {"(": 1, ")": -1}.get(ch, 0)
            j += 1
        out.append(text[i:j])
    for m in re.finditer(r"(?m)^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\n?[ \t]*(<[^>\n]*>|\S+)", text):
        out.append(m.group(1).strip("<>"))
    return out


def _decoded(dest: str) -> str:
    """A link destination as a browser reads it: entities and backslash escapes decoded,
    white space and control characters dropped."""
    import html

    return re.sub(r"[\x00-\x20\x7f]", "", re.sub(r"\\(.)", r"\1", html.unescape(dest)))


def _markdown_problems(text: str, sources: list[str]) -> list[str]:
    """The HTML, image, link and URL problems of a Markdown article (see above)."""
    import html

    problems = []
    # a link destination in angle brackets ('](<dest>)', '[ref]: <dest>') is not HTML: its own check is below
    outside = re.sub(r"(\]\(\s*|(?m:^)[ \t]{0,3}\[[^\]\n]+\]:[ \t]*)<[^<>\n]*>", r"\1", text)
    m = _HTML.search(outside)
    if m:
        problems.append(f"it contains raw HTML ({outside[m.start():m.start() + 30]!r}); a Markdown article may "
                        "hold no HTML tags (write a comparison as 'a < b')")
    if _JAVASCRIPT.search(html.unescape(text)):
        problems.append("it contains a javascript: URL")
    m = _IMAGE.search(text)
    if m:
        problems.append(f"it contains an image ({text[m.start():m.start() + 40]!r}); an article may load no image "
                        "or other external resource")
    allowed = set(sources)
    for dest in _link_destinations(text):
        d = _decoded(dest)
        if d in allowed and d.lower().startswith("https://"):
            continue
        if _SCHEME.match(d) or d.startswith(("//", "\\\\", "/\\", "\\/")):
            problems.append(f"it links to {dest[:80]!r}; a link may only be an https source of a lookup of the "
                            "record")
    variants = sorted({v for s in sources for v in (s, html.escape(s, quote=False), markdown_text(s))}, key=len,
                      reverse=True)
    for m in _BARE_URL.finditer(text):
        url = m.group(0)
        if not any(url.startswith(v) and set(url[len(v):]) <= _URL_TAIL for v in variants):
            problems.append(f"it contains the URL {url[:80]!r}, which is not a source of a lookup of the record")
            break
    return problems


def _is_title_heading(line: str, title: str) -> bool:
    """Whether *line* is ``# <title>``: the record's title, as written or Markdown-escaped."""
    heading = line.strip()
    if not heading.startswith("# "):
        return False
    said = " ".join(heading[2:].split())
    want = " ".join(title.split())
    unescaped = re.sub(r"\\(?=[^\w\s])", "", said)  # \* \_ \# ... as the Markdown escaper writes them
    return want in (said, unescaped) or said == " ".join(markdown_text(title).split())


def check_article(text: str, f: ArticleFacts, fmt: str) -> list[str]:
    """What is wrong with a writer's ``text`` for the facts ``f`` in format ``fmt``; an empty
    list means it may be saved. Checks: the number rule (every number a record number after
    the cut, see :func:`allowed_numbers`), the length (at most :data:`MAX_ARTICLE_CHARS`), the
    format (Markdown: the fixed H1 title, the author line, H2 sections, no HTML, no image, no
    link or URL but a lookup's source, no ``javascript:``, see :func:`_markdown_problems`;
    LaTeX: :func:`sanitize_latex`, a body with ``\\section`` and no title commands, Markdown or
    HTML), no product name outside the fixed lines, no record id, no timestamp, no author's
    note."""
    if fmt not in FORMATS:
        raise ArticleError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if not text or not text.strip():
        return ["the article is empty"]
    if len(text) > MAX_ARTICLE_CHARS:
        return [f"the article is {len(text):,} characters long; the limit is {MAX_ARTICLE_CHARS:,} characters"]
    problems: list[str] = []
    rest = text
    if fmt == "md":
        lines = text.splitlines()
        filled = [i for i, line in enumerate(lines) if line.strip()]
        if not filled or not _is_title_heading(lines[filled[0]], f.title):
            problems.append(f"the first line is not the heading '# {f.title}' (the record's title)")
        elif len(filled) < 2 or lines[filled[1]].strip().strip("*_ ") != AUTHOR:
            problems.append(f"the line after the title is not the author line '*{AUTHOR}*'")
        else:
            lines[filled[0]] = lines[filled[1]] = ""
        rest = "\n".join(lines)
        if any(re.match(r"#\s", line) for line in rest.splitlines()):
            problems.append("it has a second level-1 heading ('# ...'); sections are '## ...'")
        if not re.search(r"(?m)^##\s+\S", rest):
            problems.append("it has no section headings ('## ...')")
        problems += _markdown_problems(text, _lookup_sources(f))
    else:
        try:
            sanitize_latex(text)
        except ArticleError as exc:
            problems.append(str(exc))
        for cmd in ("title", "author", "date", "maketitle"):
            if re.search(rf"\\{cmd}(?![A-Za-z])", text):
                problems.append(f"the LaTeX body uses \\{cmd}; the document shell sets the title and the author")
        if not re.search(r"\\section\*?\s*\{", text):
            problems.append("the LaTeX body has no \\section heading")
        if re.search(r"(?m)^\s*#{1,6}\s|```|\*\*\S|</?(?:b|i|p|br|div|span|em|strong|h[1-6]|sup|sub)\b[^>]*>", text):
            problems.append("the LaTeX body contains Markdown or HTML")
    for name in ("Reckoner", "DeepSeek"):
        if re.search(name, rest, re.IGNORECASE):
            problems.append(f"it mentions {name} outside the author line")
    if f.record_id and f.record_id in text:
        problems.append(f"it contains the record id {f.record_id}")
    if re.search(r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}", text):
        problems.append("it contains a timestamp")
    lowered = text.lower()
    for note in (m.text.strip() for m in f.items if isinstance(m, Message) and m.hide):
        if len(note) >= 12 and note.lower() in lowered:
            problems.append(f"it quotes the author's note {note[:40]!r}")
    allowed = allowed_numbers(f)
    seqs = [getattr(i, "seq", 0) or 0 for i in f.items]
    ordinal_max = max([10, *seqs])
    bad: dict[str, str] = {}
    for w in written_numbers(rest, ordinal_max):
        if w.ordinal or _near(w.value, allowed) is not None:
            continue
        if w.prefixed_unit and w.value and any(_near(w.value / 10.0 ** (3 * k), allowed) is not None
                                               for k in range(-4, 5) if k):
            continue
        if w.text not in bad:
            closest = _closest(w.value, allowed)
            hint = f" (closest record number: {number_text(closest)})" if closest is not None else ""
            bad[w.text] = f"the number {w.text} in {_snippet(rest, w)!r} is not a number of the record{hint}"
    if bad:
        shown = list(bad.values())
        more = f"; and {len(shown) - 5} more" if len(shown) > 5 else ""
        problems.append("; ".join(shown[:5]) + more + " (numbers must be copied from the facts as given)")
    return problems


def strip_fence(text: str) -> str:
    """``text`` without one code fence around all of it (```markdown, ```latex, ```tex, ```)."""
    m = re.fullmatch(r"\s*```[A-Za-z-]*[ \t]*\n(.*?)\n?```\s*", text, re.DOTALL)
    return m.group(1) if m else text


def result_numbers(f: ArticleFacts) -> list[str]:
    """Every step result's numbers after the cut, as the offline writer prints them (for
    checking a written article contains them)."""
    out: list[str] = []
    for item in f.items:
        if isinstance(item, Step):
            def walk(v: object) -> None:
                if isinstance(v, dict) and v.get("kind") == "point" and v.get("scale") in ("degC", "degF"):
                    try:  # a temperature point is printed as its reading on its scale, cut after conversion
                        point = parse_tagged(v)
                    except EngineError:
                        pass
                    else:
                        readings = np.ravel(display.on_scale(point.mag, point.sig.temp)).tolist()
                        out.extend(number_text(x) for x in readings)
                        return
                if isinstance(v, dict):
                    for k, x in v.items():
                        if k not in ("dim", "kind", "scale"):
                            walk(x)
                elif isinstance(v, list):
                    for x in v:
                        walk(x)
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    out.append(number_text(v))
            shown = SU.from_json(item.unit, item.result.get("dim")) if isinstance(item.result, dict) else None
            if shown is not None and item.result.get("kind") != "point":
                try:  # in its display unit (issue 18), cut after conversion
                    mag = SU.convert(parse_tagged(item.result).mag, shown)
                except EngineError:
                    mag = None
                if mag is not None:
                    for x in np.ravel(mag).tolist():
                        parts = [x.real, abs(x.imag)] if isinstance(x, complex) else [x]
                        out.extend(number_text(part) for part in parts)
                    continue
            walk(item.result)
    return out


def article_body(f: ArticleFacts, fmt: str, language: str,
                 writer: ArticleWriter | None = None) -> tuple[str, str, str | None]:
    """``(body, writer name, fallback reason)``. The offline writer's body is trusted; any
    other writer's body is saved only when :func:`check_article` finds no problem. When that
    writer raises or its body fails the check, the offline writer's body is returned with the
    reason (``language`` is ``zh-CN`` or ``en``)."""
    if writer is None or isinstance(writer, OfflineWriter):
        return (writer or OfflineWriter()).write_body(f, fmt, language), "offline", None
    name = getattr(writer, "name", None) or type(writer).__name__
    if f.refusals:  # a model might present a refused calculation's value as its result: never asked
        first = next((r for r in f.refusals if r.seq == f.stopped_at), f.refusals[0])
        reason = (f"the record holds refused calls (row {first.seq}: {first.code}), which the offline writer states "
                  f"in its conclusion; the {name} writer was not asked")
        return OfflineWriter().write_body(f, fmt, language), "offline", reason
    try:
        body = strip_fence(writer.write_body(f, fmt, language))
    except Exception as exc:  # noqa: BLE001 - any failure of an untrusted writer means the offline body
        reason = f"the {name} writer failed: {exc}" if str(exc) else f"the {name} writer failed: {type(exc).__name__}"
    else:
        problems = check_article(body, f, fmt)
        if not problems:
            return body, name, None
        reason = f"the {name} writer's article was refused: " + "; ".join(problems)
    return OfflineWriter().write_body(f, fmt, language), "offline", reason
