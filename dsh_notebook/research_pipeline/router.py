"""The deterministic risk router and the per-question token budget (spec: research.md "Running
the roles": cheap tier first, strong tier on risk; over budget, stop and escalate to the person).

Configuration (``settings.toml``)::

    [research]
    budget_tokens = 200000          # per question, counted from the provider's reported usage

    [research.tiers]
    cheap  = { model = "deepseek/deepseek-chat" }               # effort optional
    strong = { model = "deepseek/deepseek-reasoner", effort = "high" }

Defaults: both tiers use the configured default model; the cheap tier sends no effort, the
strong tier the model's strongest declared ``reasoning_efforts`` (none if it declares none).

``Router(settings)``'s ``route(role, *, escalate_reason=None)`` returns ``{tier, provider, model,
effort}``: the strong tier exactly when *escalate_reason* is one of ``ESCALATE_REASONS``, the
cheap tier otherwise; the bibliographic verifier is code (tier ``code``) unless escalated for
judgment. ``risk_reason(state, role, inputs)`` derives the reason from the ledger (a claim cited
by a decision, a retracted source, two verifiers disagreeing, an earlier ``uncertain``).

The reasons (``ESCALATE_REASONS``): ``invalid_output`` (the retry after an invalid reply),
``uncertain``, ``disagreement``, ``cited_by_decision``, ``retracted`` (from the ledger, above) and
``needs_judgment`` (the bibliographic verifier's code check left the claimed metadata's match
undecided, so a model is asked whether it is the same work; given by ``roles.run_role`` from the
check's result, never by ``risk_reason``).
``over_budget(state, question_id)`` -> ``(bool, reason)``: tokens are the ``total_tokens`` (or
prompt + completion) of every ``task-completed`` whose task's inputs name the question.
"""

from __future__ import annotations

import logging

from ..errors import LLMError, SettingsError
from ..research.fold import LedgerState
from ..settings import ResearchSettings, Settings, TierSettings, load_settings

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "ESCALATE_REASONS",
    "Router",
    "over_budget",
    "risk_reason",
    "route",
    "task_tokens",
    "tokens_used",
]

DEFAULT_BUDGET_TOKENS: int = ResearchSettings.model_fields["budget_tokens"].default  # 200_000
#: reasons that send a task to the strong tier
ESCALATE_REASONS: tuple[str, ...] = ("invalid_output", "uncertain", "disagreement", "cited_by_decision", "retracted",
                                     "needs_judgment")
_CODE_ROLES = ("bibliographic_verifier",)
_BAD_SOURCE = ("retracted", "withdrawn", "expression_of_concern")
#: problems of ``[research]`` the router refuses (others are logged)
_REFUSED = ("budget_tokens", "tiers.cheap.model", "tiers.cheap.effort", "tiers.strong.model", "tiers.strong.effort")


class Router:
    """Tiers and budget read once from *settings* (a :class:`~dsh_notebook.settings.Settings`;
    default: loaded). A bad ``budget_tokens``, tier model or tier effort raises
    :class:`~dsh_notebook.errors.SettingsError` (a ``ValueError``, code ``SETTINGS``) naming the
    setting; other problems of ``[research]`` (a value that is not a table) are logged and the
    defaults used."""

    def __init__(self, settings: Settings | None = None) -> None:
        if settings is None:
            settings = load_settings()
        self.settings = settings
        research = settings.research
        for key in _REFUSED:
            for problem in research.problems_of(key):
                raise SettingsError(problem)
        for problem in research.problems_of("") + research.problems_of("tiers"):
            log.warning("research settings: %s", problem)
        self.budget_tokens = research.budget_tokens
        self.tiers = {name: self._tier(name, getattr(research.tiers, name)) for name in ("cheap", "strong")}

    def _tier(self, name: str, conf: TierSettings) -> dict:
        try:
            pid, _, info = self.settings.resolve(conf.model)
        except LLMError as exc:
            raise SettingsError(f"[research.tiers.{name}] model: {exc.message}") from None
        effort = conf.effort
        if effort is None:
            effort = info.strongest_effort if name == "strong" else None
        elif info.reasoning_efforts and effort not in info.reasoning_efforts:
            raise SettingsError(f"[research.tiers.{name}] effort {effort!r} is not one of {pid}/{info.id}'s "
                                f"declared efforts ({', '.join(info.reasoning_efforts)})")
        return {"tier": name, "provider": pid, "model": info.id, "effort": effort or ""}

    def route(self, role: str, *, escalate_reason: str | None = None) -> dict:
        """``{tier, provider, model, effort}`` for *role* (deterministic; see module docstring)."""
        if escalate_reason is not None and escalate_reason not in ESCALATE_REASONS:
            raise ValueError(f"unknown escalation reason {escalate_reason!r}; expected one of "
                             f"{', '.join(ESCALATE_REASONS)}")
        if escalate_reason is not None:
            return dict(self.tiers["strong"])
        if role in _CODE_ROLES:
            return {"tier": "code", "provider": "", "model": "", "effort": ""}
        return dict(self.tiers["cheap"])


def route(role: str, *, escalate_reason: str | None = None, settings: Settings | None = None) -> dict:
    """``Router(settings).route(role, escalate_reason=...)``."""
    return Router(settings).route(role, escalate_reason=escalate_reason)


def risk_reason(state: LedgerState, role: str, inputs: dict) -> str | None:
    """The escalation reason the ledger itself gives for a task, or ``None`` (checked in this
    order: retracted source, claim cited by a decision, disagreeing verifiers, earlier uncertain)."""
    claim = state.claims.get(str(inputs.get("claim_id", "")))
    source_id = inputs.get("source_id") or (claim.source_id if claim else None)
    source = state.sources.get(str(source_id)) if source_id else None
    if source is not None and source.verdict in _BAD_SOURCE:
        return "retracted"
    if claim is not None and role == "claim_verifier":
        if any(claim.claim_id in d.claim_ids for d in state.decisions.values()):
            return "cited_by_decision"
        if claim.verdict == "uncertain":
            return "uncertain"
        if len({v["verdict"] for v in claim.verdicts}) > 1:
            return "disagreement"
    return None


def task_tokens(usage: dict) -> int:
    """Tokens of one task's usage: ``total_tokens``, else prompt + completion."""
    if isinstance(usage.get("total_tokens"), (int, float)):
        return int(usage["total_tokens"])
    return int(sum(usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens")
                   if isinstance(usage.get(k), (int, float))))


def tokens_used(state: LedgerState, question_id: str) -> int:
    """Provider-reported tokens of the completed tasks whose inputs name *question_id*."""
    return sum(task_tokens(t.usage) for t in state.tasks.values()
               if t.status is not None and t.inputs.get("question_id") == question_id)


def over_budget(state: LedgerState, question_id: str, budget_tokens: float | None = None, *,
                settings: Settings | None = None) -> tuple[bool, str]:
    """``(True, reason)`` when the question's tokens reached its budget (default: ``[research]
    budget_tokens``, else 200,000)."""
    if budget_tokens is None:
        budget_tokens = Router(settings).budget_tokens
    used = tokens_used(state, question_id)
    if used >= budget_tokens:
        return True, f"question {question_id!r} used {used:,} tokens of its {budget_tokens:,.0f}-token budget"
    return False, f"question {question_id!r} used {used:,} of {budget_tokens:,.0f} tokens"
