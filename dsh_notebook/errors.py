"""One root for every error dsh-notebook raises (spec: style.md "Error messages say what was
given, what rule it broke and how to fix it"; llm.md "Providers and models" for the model
client's codes).

* Every public exception is a :class:`DshError` and carries ``code``: a stable upper-case name
  a caller can test (``exc.code == "SETTINGS"``) and a log can count. A class gives its default
  ``code``; classes whose failures have several kinds (:class:`LLMError`, the engine's
  ``EngineError``, the magic's ``UnitError``...) set the instance's ``code``.
* A class that was a ``ValueError`` (or an ``OSError``) stays one: ``except ValueError`` callers
  keep working; ``except DshError`` catches all of them.
* Each layer defines its own classes next to the code that raises them; this module holds the
  root, the model-access classes the base-layer settings raise (:class:`LLMError`,
  :class:`SettingsError`) and the notebook layer's root (:class:`NotebookError`). It imports
  nothing, so every layer, the reckoner engine included, may import it.
* Private control-flow exceptions (``_Refused``, ``_Cancelled``, ``_NeedBound``,
  ``_BudgetSpent``...) never leave their module and are not part of the tree. The reckoner engine
  never raises to its caller: its ``EngineError`` becomes a failure receipt
  (``{"ok": False, "code", "error"}``) at the call boundary.

The tree (module, default code; a short example that raises it)::

    DshError                                      DSH_ERROR
    ├── StorageError(ValueError)                  storage.jsonl, STORAGE_REFUSED
    │   │   dumps_line({"x": float("nan")})       # strict JSON has no NaN
    │   ├── LockedError                           STORAGE_LOCKED
    │   │       JsonlWriter(p); JsonlWriter(p)    # the second writer of one file
    │   └── UnterminatedLineError                 STORAGE_UNTERMINATED_LINE
    │           read_jsonl(p) of '{"seq": 0}' without its newline
    ├── NotARegularFile(OSError)                  storage.jsonl, STORAGE_NOT_A_FILE
    │       read_regular(p) where p is a named pipe    # never waited on
    ├── LLMError                                  errors, instance code (one of LLM_CODES)
    │   │   ChatClient(model="nope")              # UNKNOWN_MODEL, naming the known models
    │   └── SettingsError(ValueError)             errors, SETTINGS
    │           load_settings() of 'default_model = 3'   # names the file, the field, the rule
    ├── ReckonerError                             reckoner.errors, RECKONER (the reckoner layer)
    │   ├── EngineError                           instance code (ENGINE_*)
    │   │       raised inside the engine only; Engine().call(...) returns its receipt
    │   ├── UnreadableRecord(ValueError)          reckoner.records, RECORD_UNREADABLE
    │   │       read_record(p) of a file whose first line is not a record header
    │   └── ArticleError(ValueError)              reckoner.articles, ARTICLE_REFUSED
    │           write_article(open_record, ...)   # only closed records are written up
    ├── ResearchError                             research.ledger, RESEARCH (the research layers)
    │   ├── LedgerPathError(OSError, ValueError)  research.ledger, LEDGER_PATH
    │   │       Ledger("")                        # the ledger path is empty
    │   └── IdentifierError(ValueError)           research_pipeline.bibliographic, IDENTIFIER_INVALID
    │           normalize("10.1/x")               # the registrant code must be 4 to 9 digits
    ├── SearchError                               llm.search, SEARCH_UNAVAILABLE (the search tool)
    │       SearxngProvider(url).search(q, 5) when the instance answers HTTP 500
    ├── ReviewerError                             reviewer.errors, REVIEWER (the reviewer layer)
    │   ├── TargetError(ValueError)               reviewer.sources, REVIEW_TARGET
    │   │       read_target("slack:x")            # unknown source
    │   └── ReviewUsageError(ValueError)          reviewer.targets, REVIEW_USAGE
    │           %review --target                  # (the magic, the panel)
    ├── NetError                                  net.errors, NET_ERROR
    │   ├── FetchRefused                          NET_REFUSED
    │   │       fetch("ftp://x.org/p")            # only http and https
    │   ├── FetchFailed                           NET_FETCH (status, attempts)
    │   │       fetch(url) when the host answers 404, or retries run out
    │   └── RetryCancelled                        NET_CANCELLED
    │           RetryPolicy(...).call(fn, cancel=event) after event.set()
    ├── MetadataError(ValueError)                 artifact.seal, METADATA_DSH
    │       sync(nb) of a notebook whose metadata.dsh is a list  # never overwritten
    ├── UnreadableNotebook(ValueError)            artifact.seal, NOTEBOOK_UNREADABLE
    │       verify("x.ipynb") of a file that is not JSON or nbformat
    ├── SealRefused                               artifact.seal, SEAL_REFUSED
    │       sync(nb) after a sealed record file was rewritten  # nothing written
    ├── PruneRefused                              artifact.seal, PRUNE_REFUSED
    │       prune(nb) of a notebook that does not verify  # nothing removed
    ├── RouteError                                server.views, ROUTE_REFUSED
    │       GET /dsh/api/nope                     # 404 with {"error": ...}
    ├── NoSuchPath(ValueError)                    corpus.discover, CORPUS_NO_SUCH_PATH
    │       find_notebooks(["nope.ipynb"])        # dsh-notebook verify a.ipynb nope.ipynb: nothing runs
    ├── CorpusError                               corpus.cluster, CORPUS (a corpus command that cannot start)
    │   ├── DistributedMissing                    CORPUS_NEEDS_DISTRIBUTED
    │   │       run_corpus("verify", nbs, workers=2)   # without dask.distributed installed
    │   ├── SchedulerUnreachable                  CORPUS_SCHEDULER_UNREACHABLE
    │   │       run_corpus("verify", nbs, scheduler="tcp://127.0.0.1:1", connect_timeout=2)
    │   └── WorkerMismatch                        CORPUS_WORKER_MISMATCH
    │           a worker with another dsh_notebook version, without the kernel or the files
    └── NotebookError                             errors, NOTEBOOK (the magics' layer)
        ├── ReckonUsageError(ValueError)          reckon.cell, RECKON_USAGE
        │       %%reckon --digits x
        ├── GivenValueError(ValueError)           reckon.cell, instance code (ENGINE_INVALID_ARGS)
        │       given d = nan mm
        ├── UnitError(ValueError)                 reckon.units, instance code (ENGINE_INVALID_DIMENSION)
        │       given d = 2 furlongs/fortnight^0.5
        ├── ReckonRefused                         notebook.magics, instance code or RECKON_REFUSED
        │       a %%reckon line the engine refused (the record keeps the refusal)
        ├── ChatUsageError(ValueError)            notebook.chat, CHAT_USAGE
        │       %%chat --session
        ├── ChatInterrupted                       notebook.chat, CHAT_INTERRUPTED
        ├── ChatFailed                            notebook.chat, CHAT_FAILED
        ├── LedgerUsageError(ValueError)          notebook.ledger, LEDGER_USAGE
        │       %ledger frobnicate
        └── AskRefused(ValueError)                notebook.ledger, ASK_REFUSED
                %ledger ask "..." without a usable model key

Example::

    from dsh_notebook.errors import DshError
    try:
        ...
    except DshError as exc:
        print(f"{exc.code}: {exc}")
"""

from __future__ import annotations

__all__ = [
    "BUDGET",
    "CANCELLED",
    "HTTP_STATUS",
    "LLM_CODES",
    "MISSING_CREDENTIAL",
    "PROTOCOL",
    "PROVIDER",
    "SETTINGS",
    "TIMEOUT",
    "UNKNOWN_MODEL",
    "DshError",
    "LLMError",
    "NotebookError",
    "SettingsError",
]


class DshError(Exception):
    """The root of every public dsh-notebook exception; ``code`` names the kind of failure.

    >>> issubclass(SettingsError, DshError) and SettingsError.code
    'SETTINGS'
    """

    code: str = "DSH_ERROR"


# --------------------------------------------------------------------------- model access

MISSING_CREDENTIAL = "MISSING_CREDENTIAL"
UNKNOWN_MODEL = "UNKNOWN_MODEL"
HTTP_STATUS = "HTTP_STATUS"
TIMEOUT = "TIMEOUT"
PROTOCOL = "PROTOCOL"
CANCELLED = "CANCELLED"
BUDGET = "BUDGET"
SETTINGS = "SETTINGS"
#: the provider reported an error inside a reply it had begun (HTTP 200; OpenRouter's mid-stream error)
PROVIDER = "PROVIDER"

#: The codes an :class:`LLMError` carries.
LLM_CODES = (MISSING_CREDENTIAL, UNKNOWN_MODEL, HTTP_STATUS, TIMEOUT, PROTOCOL, CANCELLED, BUDGET, SETTINGS, PROVIDER)


class LLMError(DshError):
    """A model call failed: ``code`` is one of :data:`LLM_CODES`; ``status`` is the HTTP status
    for ``HTTP_STATUS``. Messages never contain a key.

    Here (not in :mod:`dsh_notebook.llm`) because the settings, a base layer, raise it for a
    model they do not list (``UNKNOWN_MODEL``) and a key they cannot find
    (``MISSING_CREDENTIAL``); :mod:`dsh_notebook.llm` exports it with the codes (``CODES``).

    >>> LLMError(UNKNOWN_MODEL, "no model 'nope' in the settings; known models: deepseek/deepseek-chat").code
    'UNKNOWN_MODEL'
    """

    code: str = "LLM_ERROR"  # the class default; every instance names its own code
    #: an HTTP error's ``Retry-After`` header as the server sent it (read by :mod:`dsh_notebook.net.retry`)
    retry_after: str | None = None

    def __init__(self, code: str, message: str, status: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class SettingsError(LLMError, ValueError):
    """A settings value that cannot be used: ``settings.toml`` is not TOML, a provider or model
    table fails validation, or a feature refuses its table (the research router's budget or
    tiers). The message names the file or table, the field and the rule; ``code`` is
    ``SETTINGS``. Also a ``ValueError``.

    >>> SettingsError("settings.toml: default_model: Input should be a valid string").code
    'SETTINGS'
    """

    code: str = SETTINGS

    def __init__(self, message: str, code: str = SETTINGS):
        super().__init__(code, message)


# --------------------------------------------------------------------------- notebook layer


class NotebookError(DshError):
    """The root of the magics' errors (``%%reckon``, ``%%chat``, ``%review``, ``%ledger``):
    usage errors, refusals and interrupted turns, each shown to the person as one message."""

    code: str = "NOTEBOOK"
