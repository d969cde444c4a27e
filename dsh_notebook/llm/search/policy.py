"""Where a lookup may read, how much, and how it answers: :class:`SearchPolicy` (spec: llm.md
"Presets from the reckoner seed"; upstream-facts.md 3.13).

* Configuration: the ``[search]`` table of the one settings object
  (:class:`dsh_notebook.settings.SearchSettings`, which validates it) with the tool's rules on
  top. A value out of range is replaced by its default and reported in ``problems`` (logged once
  per process), never refused; a ``search`` key that is not a table switches search off and is
  reported the same way. An allow-list entry is a host suffix; a single label (a whole top-level
  domain such as ``org``) is accepted but reported as too broad.
* Hosts are read the way a browser reads them (:func:`dsh_notebook.settings.host_of`): for
  http(s) a backslash is a path separator and userinfo is ignored, so
  ``https://evil.com\\@en.wikipedia.org/`` is on ``evil.com``. A strict-tier source must also be
  on an allowed host as httpx reads the URL (the enrich step fetches with httpx), so a URL the
  two read differently is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ...settings import SearchSettings, Settings, host_of, load_settings
from .shapes import Candidate
from .urls import host_matches, httpx_host

_log = logging.getLogger(__name__)

#: An answer whose every source is on one of these is of origin ``github``.
GITHUB_HOSTS: tuple[str, ...] = ("github.com", "githubusercontent.com", "github.io")

_warned: set[str] = set()


class SearchPolicy(SearchSettings):
    """Where a lookup may read, how much, and how it answers (upstream-facts.md 3.13): the
    ``[search]`` table of the settings (:class:`~dsh_notebook.settings.SearchSettings`, which
    checks every value: a wrong one is replaced by its default and described in ``problems``,
    never raised) with the tool's rules on top.

    Defaults: ``tier="strict"``, ``allowed_hosts=DEFAULT_ALLOWED_HOSTS``, ``max_results=12``
    (1-50), ``max_searches_per_record=4`` (1-50), ``answer_max_chars=1200`` (120-10000),
    ``enrich_pages=0`` (0-10), ``enrich_chars_per_page=4000`` (200-50000),
    ``synthesis_model=None`` (the chat client's model), ``synthesis_max_tokens=800``
    (128-8192). Equality compares the values, not the problems.
    """

    @classmethod
    def from_config(cls, table: Mapping[str, Any] | None) -> SearchPolicy:
        """The policy of a ``[search]`` table as written (``None`` or missing keys mean the
        defaults; a value that is not a mapping gives the default policy with the problem
        ``[search] must be a table``, and no provider)."""
        return cls._reported(cls.model_validate(table))

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> SearchPolicy:
        """The policy of ``settings.search`` (``settings`` defaults to
        :func:`~dsh_notebook.settings.load_settings`)."""
        settings = settings if settings is not None else load_settings()
        return cls._reported(cls.from_table(settings.search))

    @staticmethod
    def _reported(policy: SearchPolicy) -> SearchPolicy:
        for p in policy.problems:
            if p not in _warned:
                _warned.add(p)
                _log.warning("search settings: %s", p)
        return policy

    def allows(self, url: str) -> bool:
        """Whether a source may be read: every source in the open tier; in the strict tier an
        http(s) URL whose host matches an allowed host both as a browser reads it
        (:func:`~dsh_notebook.settings.host_of`) and as httpx does (the host the enrich step would connect to)."""
        if self.tier == "open":
            return True
        hosts = (host_of(url), httpx_host(url) if isinstance(url, str) else None)
        return all(h is not None and any(host_matches(h, p) for p in self.allowed_hosts) for h in hosts)

    def origin(self, used: list[Candidate]) -> str:
        """``web`` (open tier), ``github`` (every source on a GitHub host) or ``allowlist``."""
        if self.tier == "open":
            return "web"
        hosts = [host_of(c.get("url", "")) for c in used]
        if hosts and all(h is not None and any(host_matches(h, g) for g in GITHUB_HOSTS) for h in hosts):
            return "github"
        return "allowlist"

    def fact(self) -> dict:
        """The policy as the row records it (camelCase keys, as upstream)."""
        return {"tier": self.tier, "allowedHosts": list(self.allowed_hosts), "maxResults": self.max_results,
                "maxSearchesPerRecord": self.max_searches_per_record, "answerMaxChars": self.answer_max_chars,
                "enrichPages": self.enrich_pages, "enrichCharsPerPage": self.enrich_chars_per_page}
