"""The one secret detector (spec: style.md "No secrets in artifacts"; issue 14 item 2).

``verify``'s check 4, the reviewer's masking step and the model client's error redaction all
call this module, so a kind of secret one of them sees, all of them see.

It stands on `detect-secrets <https://github.com/Yelp/detect-secrets>`_ (Yelp's scanner), using
these of its plugins (:data:`PLUGINS`), run directly on strings (no baseline file, no global
settings, no network verification):

- ``KeywordDetector`` (``password = "..."``, ``api_key: "..."`` and the other forms it knows),
- ``BasicAuthDetector`` (``scheme://user:password@host``),
- ``JwtTokenDetector`` (JSON Web Tokens, checked to decode),
- ``PrivateKeyDetector`` (PEM, OpenSSH and PGP private key blocks),
- cloud and service keys: ``AWSKeyDetector``, ``AzureStorageKeyDetector``,
  ``GitHubTokenDetector``, ``GitLabTokenDetector``, ``SlackDetector``, ``StripeDetector``,
  ``OpenAIDetector``, ``SendGridDetector``, ``PypiTokenDetector`` (not ``NpmDetector``: its
  pattern is quadratic on a long line; npm tokens are one of the own rules),
- the two high-entropy plugins (``HexHighEntropyString``, ``Base64HighEntropyString``), but only
  on values whose key names a secret (a hash or an id elsewhere is not a secret).

and adds what detect-secrets 1.5 does not know (:data:`OWN_RULES`): the model providers' keys
(DeepSeek, OpenAI project keys, Anthropic, OpenRouter, Groq, xAI, Google, Hugging Face, GitHub
fine-grained tokens, npm tokens), ``Authorization:``/``Bearer`` credentials, URL credentials with any
character in the password (:data:`dsh_notebook.redact.URL_CREDENTIALS`), and fields named like
secrets in the forms people paste: ``.env`` lines (``JWT_SECRET=...``, ``export TOKEN=...``),
YAML and INI lines (``password: ...``), JSON and TOML fields (``"api_key": "..."``), query
strings (``?access_token=...``) and command-line flags (``--password ...``).

A value is not a secret when it is a placeholder (``<your key>``, ``${VAR}``, ``$VAR``,
``xxxx``, ``****``, ``changeme``, ``null``), the name of an environment variable
(``api_key_env = "DEEPSEEK_API_KEY"``), an already masked value (``[secret]``) or a call
(``password = getpass()``). Names that only sometimes hold secrets (``token``, ``auth``,
``credential``, ``access_key``, ``session``) count only with a random-looking value (at least 12
characters, letters and digits, and a Shannon entropy, as detect-secrets' high-entropy plugins
compute it, of at least 80% of the most its length allows, capped at 3.0 bits for hex and 4.0
for other strings).

- :func:`find` gives the spans of secrets in a text; :func:`mask` replaces them.
- :func:`find_in_json` walks a parsed JSON document (a notebook, a sidecar line) and never
  reads the project's own seal fields (:data:`EXEMPT_FIELDS`: hashes, chain links, heads,
  signatures): exempt by field, never by file.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .redact import URL_CREDENTIALS

__all__ = ["EXEMPT_FIELDS", "OWN_RULES", "PLUGINS", "Secret", "find", "find_in_json", "is_exempt_field", "mask",
           "might_hold"]

#: The detect-secrets plugins this detector runs (class names in ``detect_secrets.plugins``).
PLUGINS = (
    "keyword.KeywordDetector", "basic_auth.BasicAuthDetector", "jwt.JwtTokenDetector",
    "private_key.PrivateKeyDetector", "aws.AWSKeyDetector", "azure_storage_key.AzureStorageKeyDetector",
    "github_token.GitHubTokenDetector", "gitlab_token.GitLabTokenDetector", "slack.SlackDetector",
    "stripe.StripeDetector", "openai.OpenAIDetector", "sendgrid.SendGridDetector", "pypi_token.PypiTokenDetector",
    "high_entropy_strings.HexHighEntropyString", "high_entropy_strings.Base64HighEntropyString",
)

#: Field names whose values are the project's own seals, never read by the scan: a record's or a
#: file's sha256, a ledger event's hash and the previous event's hash, a ledger head, a signature,
#: the signed seal set (``metadata.dsh.seal``: file names and their hashes).
EXEMPT_FIELDS = frozenset({"sha256", "hash", "prev", "head", "chain", "signature", "signatures",
                           "public_key", "fingerprint", "seal"})


def is_exempt_field(key: str) -> bool:
    """Whether a JSON field named *key* holds one of the project's seals (:data:`EXEMPT_FIELDS`,
    or a name ending in ``_sha256``)."""
    return key in EXEMPT_FIELDS or key.endswith("_sha256")


_NO_PREVIEW = frozenset({"Secret Keyword", "URL with a password", "URL with a token", "Command-line password",
                         "Authorization credential", "API key header", "Private Key", "Basic Auth Credentials"})


@dataclass(frozen=True)
class Secret:
    """A secret found in a text: ``text[start:end]`` is the secret value; ``kind`` names the
    rule or detect-secrets plugin that found it (``"Secret Keyword"``, ``"JSON Web Token"``...)."""

    kind: str
    start: int
    end: int

    def line(self, text: str) -> int:
        """The 1-based line of *text* the secret starts on."""
        return text.count("\n", 0, self.start) + 1

    def preview(self, text: str) -> str:
        """An ellipsis, after the first 4 characters of a token whose kind has a fixed prefix
        (``sk-p…``, ``ghp_…``: which key is meant); a password, a named value or a credential in
        a URL or a header shows none of its characters."""
        value = text[self.start:self.end]
        shown = len(value) >= 12 and self.kind not in _NO_PREVIEW
        return (value[:4] if shown else "") + "…"


# ------------------------------------------------------------------------------- own rules

# Names that always hold a secret (detect-secrets' keyword list and a few it lacks).
_STRONG_NAME = (r"(?:api[_\-.]?key|apikey|auth[_\-]?key|service[_\-]?key|account[_\-]?key|db[_\-]?key|"
                r"database[_\-]?key|priv(?:ate)?[_\-]?key|client[_\-]?key|signing[_\-]?key|secret[_\-]?key|"
                r"db[_\-]?pass|database[_\-]?pass|key[_\-]?pass|passw(?:or)?d|pwd|pass|secret|contrase[ñn]a|"
                r"passphrase|passwort|mot[_\-]?de[_\-]?passe|kennwort|private[_\-]?token)")
# Names that sometimes hold one: counted only with a random-looking value.
_WEAK_NAME = (r"(?:token|auth|authorization|credentials?|access[_\-]?key|session(?:[_\-]?key)?|cookie|bearer|sig|"
              r"signature)")
# A name word starts a word or a camelCase part and ends one ("JWT_SECRET", "clientSecret",
# "db-password", "tokens"; never "compass", "secretary" or "tokenizer").
_B = r"(?-i:(?<![A-Za-z])|(?<=[a-z])(?=[A-Z]))"
_E = r"s?(?-i:(?![a-z]))"
# Distinctive words count glued to anything before them ("PGPASSWORD", "newpassword"), and an
# ALL-CAPS variable ending in KEY or TOKEN is named for one ("OPENAIKEY", "HFTOKEN").
_GLUED_STRONG = r"(?:passw(?:or)?d|passwort|passphrase)"
_STRONG_RE = re.compile(rf"{_B}{_STRONG_NAME}{_E}|{_GLUED_STRONG}{_E}|(?-i:[A-Z0-9]PASS(?:WORD)?S?$)", re.IGNORECASE)
_WEAK_RE = re.compile(rf"{_B}{_WEAK_NAME}{_E}|(?-i:^[A-Z][A-Z0-9]*(?:KEY|TOKEN|SECRET)S?$)", re.IGNORECASE)

_VALUE_QUOTED = r"""(?:[rRbBfFuU]{1,2})?(?P<q>"""+'"""'+r"""|'''|["'`])(?P<qv>(?:(?!(?P=q))[^\r\n]){1,2048})(?P=q)"""
_VALUE_BARE = r"(?P<bv>[^\s\"'`&;,<>#\\()\[\]{}]{1,1024})"
# the rest of a line holding only "name: value" (a YAML or .env line), a comment after " #" left out
_VALUE_REST = r"(?P<bv>[^\s\"'`][^\r\n]{0,1023}?)"
_VALUE_FLAG = r"(?P<bv>[^\s\"'`]{1,1024})"

_NAME_HINTS = ("key", "pass", "pwd", "secret", "contrase", "kennwort", "token", "auth", "credential", "cookie",
               "bearer", "sig", "session")

#: Each rule: (kind, hints, pattern). A line is matched against a pattern only when it holds one
#: of the hints (lower case); the pattern's group ``v`` (or ``qv``/``bv``) is the secret.
OWN_RULES: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("Model provider key", ("sk-",), re.compile(
        r"(?<![A-Za-z0-9_\-])(?P<v>sk-(?:proj-|ant-(?:api|admin)\d\d-|or-v1-|svcacct-|admin-)?"
        r"(?:(?=[A-Za-z_\-]{0,200}\d)[A-Za-z0-9_\-]{20,256}|[A-Za-z0-9_]{20,256}(?![A-Za-z0-9_\-])))")),
    ("Model provider key", ("gsk_", "xai-", "aiza", "hf_", "github_pat_", "r8_", "npm_"), re.compile(
        r"(?<![A-Za-z0-9_\-])(?P<v>(?:gsk_[A-Za-z0-9]{40,100}|xai-[A-Za-z0-9]{40,120}|AIza[0-9A-Za-z_\-]{35}"
        r"|hf_[A-Za-z0-9]{20,64}|github_pat_[A-Za-z0-9_]{50,120}|r8_[A-Za-z0-9]{30,60}|npm_[A-Za-z0-9]{36}))")),
    ("Authorization credential", ("authorization",), re.compile(
        r"(?i:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?(?:(?P<scheme>(?i:basic|bearer|token|digest))\s+)?"
        r"(?P<v>[A-Za-z0-9._~+/=%\-]{8,4096})")),
    ("Authorization credential", ("bearer",), re.compile(
        r"(?<![A-Za-z])(?i:bearer)\s+(?P<v>(?:(?=[A-Za-z._~+/=%\-]{0,200}\d)[A-Za-z0-9._~+/%\-]{16,4096}"
        r"|[A-Za-z0-9_~+/]{20,4096}(?![A-Za-z0-9._~+/\-]))=*)")),
    ("URL with a password", ("://", ":\\/\\/"), URL_CREDENTIALS),
    # a token as a URL's whole userinfo: https://<token>@github.com/...
    ("URL with a token", ("://",), re.compile(
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,31}://(?P<v>[A-Za-z0-9_\-]{20,256})@[A-Za-z0-9.\-]")),
    ("Model provider key", ("gocspx-", "ya29."), re.compile(
        r"(?<![A-Za-z0-9_\-])(?P<v>GOCSPX-[A-Za-z0-9_\-]{20,64}|ya29\.[0-9A-Za-z_\-]{20,4096})")),
    ("JSON Web Token", ("eyj",), re.compile(  # a whole JWT, however long its line (the plugin reads chunks)
        r"(?<![A-Za-z0-9_\-])(?P<v>eyJ[A-Za-z0-9_\-]{8,16384}\.[A-Za-z0-9_\-]{8,65536}\.[A-Za-z0-9_\-]{8,16384})")),
    ("Private Key", ("private key", "putty-user-key"), re.compile(
        r"(?P<v>-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d)")),
    ("API key header", ("api-key", "auth-token", "access-token", "private-token"), re.compile(
        r"(?i:x-api-key|api-key|x-auth-token|x-access-token|private-token|x-goog-api-key)[\"']?\s*:\s*[\"']?"
        r"(?P<v>[^\s\"',;]{8,4096})")),
    ("Command-line password", ("curl", "wget", "http", "mysql", "mariadb", "sshpass", "docker", "podman", "helm"),
     re.compile(  # curl -u user:pw, mysql -pPW, sshpass -p PW
        r"(?:\b(?:curl|wget|http|httpie)\b[^\n]{0,400}?\s(?:-u|--user)\s+['\"]?[^\s:'\"]{1,128}:(?P<v>[^\s'\"]{1,256})"
        r"|\b(?:mysql|mysqldump|mariadb)\b[^\n]{0,200}?\s-p(?P<v2>[^\s'\"]{1,256})"
        r"|\b(?:sshpass|docker\s+login|podman\s+login|helm\s+registry\s+login)\b[^\n]{0,200}?\s-p\s+['\"]?"
        r"(?P<v3>[^\s'\"]{1,256}))")),
    ("Secret Keyword", ("%env", "setdefault", "putenv", "setenv"), re.compile(  # %env NAME VALUE, os.environ.setdefault(...)
        r"(?:%env\s+|(?:setdefault|putenv|setenv)\(\s*['\"])(?P<name>[A-Za-z_][A-Za-z0-9_]{0,127})"
        r"(?:['\"]\s*,\s*['\"]|\s+|\s*=\s*)(?P<v>[^\s'\"]{1,1024})")),
    ("Secret Keyword", _NAME_HINTS, re.compile(  # <password>...</password>
        r"<(?P<name>[A-Za-z_][\w.\-]{0,63})>(?P<v>[^<\s]{1,1024})</(?P=name)>")),
    ("Secret Keyword", ("パスワード", "密码", "密碼", "口令", "비밀번호", "пароль"), re.compile(
        r"(?i:パスワード|密码|密碼|口令|비밀번호|пароль)\s*[:：=]\s*(?P<v>[^\s'\"]{1,1024})")),
)

#: Fields named like secrets, matched after a name (found from its secret word, see
#: :func:`_names`): (pattern at the name's end, whether the name must start its line, whether it
#: must be a command-line flag). The pattern's group ``qv`` or ``bv`` is the value.
_NAME_RULES: tuple[tuple[re.Pattern[str], bool, bool], ...] = (
    # name="value", name: 'value', "name": "value", name := "value", name => "value", NAME[0] = "v"
    (re.compile(rf"[\"'\]]{{0,2}}\s*(?::=|=>|==|[:=])\s*{_VALUE_QUOTED}"), False, False),
    # name: value / NAME=value on a line of its own (YAML, INI, TOML, .env, a pasted config): the
    # rest of the line, a comment after " #" left out
    (re.compile(rf"[\"']?[ \t]*[:=][ \t]*{_VALUE_REST}[ \t]*(?:[ \t]#.*)?\r?$"), True, False),
    # --password value, --api-key=value
    (re.compile(rf"(?:=|[ \t]+){_VALUE_FLAG}"), False, True),
    # NAME=value inside a line (query strings, shell), no space around "="
    (re.compile(rf"={_VALUE_BARE}"), False, False),
)
_NAME_CHAR = r"[A-Za-z0-9_.\-]"
_NAME_END = re.compile(rf"{_NAME_CHAR}{{0,128}}")
_NAME_START = re.compile(rf"{_NAME_CHAR}{{0,128}}$")
_LINE_LEAD = re.compile(r"(?:(?:export|set|setx)[ \t]+|%env[ \t]+)?[\"']?")
_NAME_WORD = re.compile("|".join(_NAME_HINTS))
_ASSIGNED = re.compile(r"[\]\[\"'`0-9]{0,6}\s{0,4}(?:[:=!<>]|\?\?)")  # what detect-secrets' keyword forms have next

#: The strings a line must hold for each detect-secrets plugin to be run on it (the fixed parts of
#: the plugin's own patterns; tests hold an example secret for every plugin). A hint in lower case
#: is matched in any case; one with capitals only as written.
PLUGIN_HINTS: dict[str, tuple[str, ...]] = {
    "KeywordDetector": ("key", "pass", "pwd", "secret", "contrase"),
    "BasicAuthDetector": ("://",),
    "JwtTokenDetector": ("eyj",),
    "PrivateKeyDetector": ("private key", "putty-user-key", "ssh2 encrypted"),
    "AWSKeyDetector": ("akia", "asia", "abia", "ACCA", "a3t", "aws"),  # "acca" is in many hex hashes
    "AzureStorageKeyDetector": ("accountkey",),
    "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLabTokenDetector": ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-", "glimt-",
                            "glptt-", "glagent-", "gloas-"),
    "SlackDetector": ("xox", "hooks.slack.com"),
    "StripeDetector": ("k_live_",),
    "OpenAIDetector": ("t3blbkfj",),
    "SendGridDetector": ("sg.",),
    "PypiTokenDetector": ("pypi-",),
}

_PLACEHOLDER = re.compile(
    r"(?i)^(?:true|false|null|none|nil|undefined|yes|no|on|off|required|optional|string|str|int|bool|"
    r"redacted|masked|hidden|removed|changeme|change[_\-]?me|example|sample|test|dummy|placeholder|"
    r"password|passwd|secret|token|value|your[_\-].*|(?:sk-)?(?:my|test|fake|dummy|example|sample)[_\-]?"
    r"(?:api[_\-]?)?(?:key|secret|token|password)|sk-(?:secret|test|dummy|fake|xxx|your.*)|"
    r"(?:sk|pk|rk)[_\-](?:live_|test_|ant-|proj-|or-v1-)?|ollama|lm-studio|not-needed|no-key|sk-no-key-required|empty|"
    r"pass|fail|passed|failed|"
    r".*(?:dummy|fake|placeholder|not[_\-]?real|needs[_\-]no[_\-]key|no[_\-]key[_\-]needed|changeme).*|"
    r"\[[a-z ]*\]|\*+|x+|\.+|-+|_+|•+|…+|"
    r"(?-i:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+))$")   # the last: an environment variable's name


def _is_placeholder(value: str, *, bare: bool) -> bool:
    """A value that is not a secret: a placeholder, an environment variable's name, a masked or
    templated value, a reference (``$VAR``, ``os.environ[...]``), prose. A quoted value is a
    literal: it is never taken for a reference because of what else the line holds."""
    from detect_secrets.filters import heuristic as h

    v = value.strip()
    if _PLACEHOLDER.match(v) or h.is_templated_secret(v) or not any(ch.isalnum() for ch in v):
        return True
    if len(v) < 4 or (v.isdigit() and len(v) < 6):
        return True
    if v.startswith(("$", "%(", "{{", "os.", "process.env", "env(", "getenv", "ENV[", "***")):
        return True
    if bare and (v.endswith((":", ".")) or len(v.split()) > 5):  # prose: "password: see below."
        return True
    return bare and bool(re.fullmatch(r"[A-Za-z_][\w.]*\(.*\)|[A-Za-z_][\w.]*\[.*\]", v))  # a call or a lookup


def _random_looking(value: str) -> bool:
    if len(value) < 12 or not re.search(r"\d", value) or not re.search(r"[A-Za-z]", value):
        return False
    # detect-secrets' limits (3.0 for hex, 4.5 for base64) are for long strings: a string of n
    # characters has at most log2(n) bits per character, so a short token needs 80% of that
    hexp, b64p = _entropy_plugins()
    if re.fullmatch(r"[0-9a-fA-F]+", value):
        return hexp.calculate_shannon_entropy(value) >= min(0.8 * math.log2(len(value)), 3.0)
    return b64p.calculate_shannon_entropy(value) >= min(0.8 * math.log2(len(value)), 4.0)


# ------------------------------------------------------------------------ detect-secrets


@lru_cache(maxsize=1)
def _plugins() -> tuple[Any, ...]:
    """The regex plugins of :data:`PLUGINS` (detect-secrets imported on first use: it takes
    0.15 s and is not needed until something is scanned)."""
    import importlib

    out = []
    for spec in PLUGINS:
        module, cls = spec.rsplit(".", 1)
        if module in ("keyword", "high_entropy_strings"):
            continue
        out.append(getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)())
    return tuple(out)


@lru_cache(maxsize=1)
def _entropy_plugins() -> tuple[Any, Any]:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString

    return HexHighEntropyString(), Base64HighEntropyString()


@lru_cache(maxsize=1)
def _keyword() -> tuple[Any, dict[Any, int]]:
    from detect_secrets.plugins import keyword

    return keyword.KeywordDetector(), keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP


def _all_hints() -> set[str]:
    return ({h for _, hs, _ in OWN_RULES for h in hs} | {h for hs in PLUGIN_HINTS.values() for h in hs}
            | set(_NAME_HINTS))


@lru_cache(maxsize=1)
def _trigger() -> re.Pattern[str]:
    """Any lower-case hint of :data:`OWN_RULES`, :data:`PLUGIN_HINTS` and the secret words, as
    one trie-shaped pattern (Python's ``re`` tries one branch per first character) matched on
    lower-cased text: lines that hold none are not scanned further."""
    trie: dict[str, Any] = {}
    for hint in _all_hints():
        if hint == hint.lower():
            node = trie
            for ch in hint:
                node = node.setdefault(ch, {})
            node[""] = {}

    def branch(node: dict[str, Any]) -> str:
        if "" in node:
            return ""  # a hint ends here: longer hints through it add nothing to a trigger
        alts = [re.escape(ch) + branch(rest) for ch, rest in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return re.compile(branch(trie))


@lru_cache(maxsize=1)
def _exact_trigger() -> re.Pattern[str] | None:
    """The hints with capitals, matched as written (None when there are none)."""
    exact = sorted(h for h in _all_hints() if h != h.lower())
    return re.compile("|".join(re.escape(h) for h in exact)) if exact else None


def _holds(hints: tuple[str, ...], text: str, lower: str) -> bool:
    return any(h in (lower if h == h.lower() else text) for h in hints)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")  # keeps every offset


# ----------------------------------------------------------------------------------- scan


def might_hold(text: str) -> bool:
    """Whether *text* holds any hint a secret needs (a secret word, a key prefix, ``://``): when
    it does not, :func:`find` finds nothing in it or in any part of it, nor
    :func:`find_in_json` in the JSON it encodes (a secret-named field's name is a hint too). A
    fast first pass over a whole file."""
    exact = _exact_trigger()
    # str.lower, not the offset-keeping ASCII table find() needs: lower-casing more letters can
    # only add hits (every hint is lower case), and str.translate leaves its fast path on the
    # first non-ASCII character (`Ω`, `·` in a record): 14x slower on a record file (issue 23)
    return (_trigger().search(text.lower()) is not None
            or (exact is not None and exact.search(text) is not None))


def find(text: str) -> list[Secret]:
    """The secrets in *text*, in order, overlapping finds merged. Never raises on any string."""
    if not text:
        return []
    lower = text.translate(_ASCII_LOWER)
    spans: list[Secret] = []
    after = -1
    exact = _exact_trigger()
    hits = [(m.start(), m.end()) for m in _trigger().finditer(lower)]
    if exact is not None:
        hits = sorted(hits + [(m.start(), m.end()) for m in exact.finditer(text)])
    for hit_start, hit_end in hits:
        if hit_start < after:  # on a line already read, or inside a secret found (a key block)
            continue
        start = text.rfind("\n", 0, hit_start) + 1
        end = text.find("\n", hit_end)
        end = len(text) if end < 0 else end
        found = list(_scan_line(text, lower[start:end], start, end))
        spans.extend(found)
        after = max([end] + [s.end for s in found])
    return _merged(spans)


_CHUNK, _OVERLAP = 2048, 1024  # detect-secrets' patterns run on at most 3 KiB at a time


def _scan_line(text: str, lower: str, start: int, end: int) -> Iterator[Secret]:
    line = text[start:end]
    for kind, hints, pattern in OWN_RULES:
        if not _holds(hints, line, lower):
            continue
        covered = 0  # the end of what this rule found last: a match inside it is not read again
        for m in pattern.finditer(line):
            if start + m.start() < covered:
                continue
            if kind == "URL with a password":  # the whole userinfo: the user name goes too
                if ":" in m.group("userinfo"):
                    yield Secret(kind, start + m.start("userinfo"), start + m.end("userinfo"))
                continue
            group = next((g for g in ("v", "v2", "v3") if m.groupdict().get(g) is not None), None)
            if group is None:
                continue
            value = m.group(group)
            if kind == "Private Key":
                block = _private_key_block(text, start + m.start(group))
                covered = block.end
                yield block
                continue
            if "name" in m.groupdict() and not _named_secret(m.group("name"), value, bare=True):
                continue
            if kind == "Authorization credential" and (_is_placeholder(value, bare=True) or (
                    "scheme" in m.groupdict() and m.group("scheme") is None and not _random_looking(value))):
                continue
            if kind in ("API key header", "Command-line password") and _is_placeholder(value, bare=False):
                continue
            if kind == "URL with a token" and not _random_looking(value):
                continue
            yield Secret(kind, start + m.start(group), start + m.end(group))
    yield from _named(line, lower, start)
    for a in range(0, max(len(line) - _OVERLAP, 1), _CHUNK):  # long lines (a JSONL log) in chunks
        chunk, chunk_lower = line[a:a + _CHUNK + _OVERLAP], lower[a:a + _CHUNK + _OVERLAP]
        for plugin in _plugins():
            if not _holds(PLUGIN_HINTS[type(plugin).__name__], chunk, chunk_lower):
                continue
            next_at: dict[str, int] = {}
            covered = 0
            for value in plugin.analyze_string(chunk):
                at = chunk.find(value, next_at.get(value, 0)) if value else -1
                if at < 0:
                    continue
                next_at[value] = at + len(value)
                if start + a + at < covered:  # inside what this plugin found already
                    continue
                if plugin.secret_type == "Private Key":
                    found = _private_key_block(text, start + a + at)
                elif not (plugin.secret_type == "Basic Auth Credentials" and _is_placeholder(value, bare=False)):
                    found = _whole_token(Secret(plugin.secret_type, start + a + at, start + a + at + len(value)),
                                         text, start, end)
                else:
                    continue
                covered = found.end
                yield found


def _named(line: str, lower: str, start: int) -> Iterator[Secret]:
    """Fields named like secrets (:data:`_NAME_RULES`, then detect-secrets' keyword forms in a
    window after the name); a name inside a value already found is not read again."""
    keyword, regexes = _keyword()
    covered = -1
    keyword_runs = 0  # detect-secrets' keyword patterns, at most 200 windows a line (they are slow)
    lead = len(line) - len(line.lstrip(" \t-"))
    for name_start, name_end in _names(line, lower):
        if name_start < covered:
            continue
        name = line[name_start:name_end].lstrip("-")
        flag = name_end - name_start > len(name)
        found = False
        for pattern, whole_line, as_flag in _NAME_RULES:
            if as_flag and not (flag and (name_start == 0 or not line[name_start - 1].isalnum())):
                continue
            if whole_line and (name_start < lead or not _LINE_LEAD.fullmatch(line, lead, name_start)):
                continue
            m = pattern.match(line, name_end)
            if m is None:
                continue
            found = True  # judged here: a placeholder value is not read again by detect-secrets
            group = "qv" if m.groupdict().get("qv") is not None else "bv"
            if _named_secret(name, m.group(group), bare=group == "bv"):
                yield Secret("Secret Keyword", start + m.start(group), start + m.end(group))
            covered = m.end(group)  # names inside a value already judged are not read again
            break
        if (not found and _STRONG_RE.search(name) and not _NOT_A_SECRET_NAME.search(name)
                and _ASSIGNED.match(line, name_end) and keyword_runs < 200):
            keyword_runs += 1
            window = line[max(0, name_start - 1):name_end + 200]
            for value in keyword.analyze_string(window, regexes):
                at = window.find(value) if value else -1
                if at >= 0 and not _is_placeholder(value, bare=False):
                    a = max(0, name_start - 1) + at
                    yield Secret(keyword.secret_type, start + a, start + a + len(value))
                    covered = a + len(value)


def _names(line: str, lower: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each name in *line* that holds a secret word (``JWT_SECRET``,
    ``"api_key"``, ``--password``), each once."""
    after = -1
    for m in _NAME_WORD.finditer(lower):
        if m.start() < after:
            continue
        left = _NAME_START.search(line, max(0, m.start() - 128), m.start())
        name_start = left.start() if left else m.start()
        right = _NAME_END.match(line, m.start())
        name_end = right.end() if right else m.end()
        after = name_end
        yield name_start, name_end


_NOT_A_SECRET_NAME = re.compile(r"(?i)(?:_env|_file|_path|_name|_id|_url|_hint|_length|_len|_count|_type|_policy|"
                                r"_header|_var|_min|_max|_hash|_sha256|_sha1|_md5|_digest|_prompt|_label|_field|"
                                r"_required|_reset|_expires?|_expiry|_ttl)$")


def _named_secret(name: str, value: str, *, bare: bool) -> bool:
    if _is_placeholder(value, bare=bare) or _NOT_A_SECRET_NAME.search(name):
        return False
    if re.fullmatch(r"(?i)(?:old)?pwd", name) and re.match(r"\s*(?:/|~|\\\\|[A-Za-z]:[\\/])", value):
        return False  # PWD is the working folder
    if _STRONG_RE.search(name):
        return True
    from detect_secrets.filters import heuristic as h

    return bool(_WEAK_RE.search(name)) and _random_looking(value) and not h.is_potential_uuid(value)


_TOKEN_BEFORE_REVERSED = re.compile(r"[A-Za-z0-9_\-+/.~]{0,512}")
_TOKEN_AFTER = re.compile(r"[A-Za-z0-9_\-+/.~]{0,4096}=*")


def _whole_token(found: Secret, text: str, start: int, end: int) -> Secret:
    """*found* widened to the whole token around it (at most 512 characters before, 4 KiB after):
    a plugin reports the part its pattern groups (``ghp`` of a GitHub token, a JWT without its
    signature)."""
    lo = max(start, found.start - 512)
    before = _TOKEN_BEFORE_REVERSED.match(text[lo:found.start][::-1])  # linear: no search from each start
    after = _TOKEN_AFTER.match(text, found.end, end)
    return Secret(found.kind, found.start - (before.end() if before else 0), after.end() if after else found.end)


_KEY_END = re.compile(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY[ A-Z]{0,10}-----|END PGP PRIVATE KEY BLOCK-----|"
                      r"Private-MAC: ?[0-9a-fA-F]{1,128}")


def _private_key_block(text: str, at: int) -> Secret:
    """A private key's whole block: from its BEGIN line to its END line (looked for in the next
    MiB), or, without one, to the end of the text or of that MiB (at a line's end)."""
    begin = text.rfind("\n", 0, at) + 1
    m = _KEY_END.search(text, at, at + 1_048_576)
    if m:
        return Secret("Private Key", begin, m.end())
    end = len(text) if len(text) <= at + 1_048_576 else text.find("\n", at + 1_048_576)
    return Secret("Private Key", begin, len(text) if end < 0 else end)


def _merged(spans: list[Secret]) -> list[Secret]:
    out: list[Secret] = []
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if out and s.start < out[-1].end:
            if s.end > out[-1].end:
                out[-1] = Secret(out[-1].kind, out[-1].start, s.end)
            continue
        out.append(s)
    return out


def mask(text: str, replacement: str = "[secret]") -> tuple[str, int]:
    """``(text with every secret value replaced by *replacement*, how many)``: the names, quotes
    and the rest of the text stay (``JWT_SECRET=[secret]``)."""
    found = find(text)
    if not found:
        return text, 0
    parts, last = [], 0
    for s in found:
        parts.append(text[last:s.start])
        parts.append(replacement)
        last = s.end
    parts.append(text[last:])
    return "".join(parts), len(found)


def find_in_json(document: Any, path: str = "$") -> Iterator[tuple[str, str, Secret]]:
    """Every secret in a parsed JSON *document*: ``(field path, the string holding it, the
    secret's span in that string)``. Fields named in :data:`EXEMPT_FIELDS` are never read; a
    string whose field's name says secret (``"api_key": "..."``) is a secret by that name,
    whatever its shape; every other string is scanned with :func:`find`, and walked as JSON too
    when it holds a JSON document (a tool call's arguments). Keys are scanned as well, and the
    field path never shows a secret (it is masked there)."""
    stack: list[tuple[str, str | None, Any]] = [(path, None, document)]
    depth = 0
    while stack:
        where, key, value = stack.pop()
        if isinstance(value, str):
            if (key is not None and (_STRONG_RE.search(key) or _WEAK_RE.search(key))
                    and _named_secret(key, value, bare=False)):
                yield where, value, Secret("Secret Keyword", 0, len(value))
                continue
            stripped = value.lstrip()
            if stripped[:1] in ("{", "[") and len(value) < 4_000_000 and depth < 8:
                try:  # a JSON document kept as a string (a tool call's arguments): its fields too
                    inner = json.loads(value)
                except ValueError:
                    inner = None
                if isinstance(inner, (dict, list)):  # read field by field instead of as text
                    stack.append((where + "(json)", None, inner))
                    depth += 1
                    continue
            yield from ((where, value, s) for s in find(value))
        elif isinstance(value, dict):
            for k, v in reversed(list(value.items())):
                if isinstance(k, str) and is_exempt_field(k):
                    continue
                shown = str(k)
                if len(shown) >= 16:  # a key may itself be a secret (no secret is shorter)
                    in_key = find(shown)
                    for s in in_key:
                        yield f"{where}.{{key}}", shown, s
                    if in_key:
                        shown = mask(shown)[0]
                stack.append((f"{where}.{shown}", str(k), v))
        elif isinstance(value, list):
            for i in range(len(value) - 1, -1, -1):
                stack.append((f"{where}[{i}]", key, value[i]))
