"""The side panel's JSON routes as jupyter-server handlers (spec: storage.md "Routes for the
side panel").

* Every handler is an ``APIHandler``: ``@web.authenticated`` and ``@authorized`` (resource
  ``contents``: GET reads, POST writes), so jupyter-server's own authentication, authorizer and
  XSRF check (for cookie-authenticated POSTs) apply unchanged.
* ``?notebook=PATH`` is resolved inside the server's ``root_dir`` by
  :func:`~dsh_notebook.server.views.resolve_notebook`; the work is done by
  :mod:`~dsh_notebook.server.views` in a worker thread (file locks never stall the server).
* Errors are JSON with ``error`` (and the ledger's ``ok``/``code`` for a refused decision):
  400 bad input, 403 outside the root, 404 unknown record or ledger, 409 refused by the ledger.
  Any other path under ``/dsh/api/`` reaches :class:`NoRouteHandler` last: a JSON 404 naming
  the path (behind the same authentication), never jupyter-server's HTML page.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from . import views
from .views import RouteError

AUTH_RESOURCE = "contents"


class _Handler(APIHandler):
    auth_resource = AUTH_RESOURCE

    def _root(self) -> Path:
        return Path(os.path.expanduser(str(self.settings["server_root_dir"]))).resolve()

    def _notebook(self) -> Path:
        allow_hidden = bool(getattr(self.contents_manager, "allow_hidden", True))
        return views.resolve_notebook(self._root(), self.get_query_argument("notebook", None),
                                      allow_hidden=allow_hidden)

    def _body(self) -> Any:
        raw = self.request.body
        if not raw or not raw.strip():
            raise RouteError(400, "the request has no body: send a JSON object")
        if len(raw) > MAX_BODY:
            raise RouteError(400, f"the body is {len(raw)} bytes, over the {MAX_BODY}-byte limit of these routes")
        try:
            return json.loads(raw.decode("utf-8"))
        except RecursionError:
            raise RouteError(400, "the body nests arrays or objects too deeply to be read") from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise RouteError(400, f"the body is not JSON ({' '.join(str(exc).split())[:200]})") from None

    async def _answer(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` off the event loop and write its JSON, or the refusal it raised."""
        try:
            result = await asyncio.to_thread(fn, *args)
        except RouteError as exc:
            self._refuse(exc)
            return
        self.finish(json.dumps(result, ensure_ascii=False, allow_nan=False))

    def _refuse(self, exc: RouteError) -> None:
        self.set_status(exc.status)
        self.finish(json.dumps(exc.payload, ensure_ascii=False))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """jupyter-server's own refusals (403 unauthenticated or XSRF, 405) and unexpected
        errors, as JSON with ``error`` too."""
        exc = (kwargs.get("exc_info") or (None, None, None))[1]
        message = self._reason
        if isinstance(exc, web.HTTPError) and exc.log_message:
            try:
                message = exc.log_message % exc.args
            except (TypeError, ValueError):
                message = exc.log_message
        elif exc is not None and not isinstance(exc, web.HTTPError):
            # never the exception's text: it may hold a server path; the server's log has it
            message = f"internal error ({type(exc).__name__}); the server's log has the details"
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": str(message), "reason": self._reason}, ensure_ascii=False))

    def _person(self) -> str:
        return person_for(self.current_user, getattr(self, "identity_provider", None))


_HEX_ID = re.compile(r"[0-9a-f]{32}")
#: The largest request body the routes read, bytes (a decision with its note is far smaller).
MAX_BODY = 64 * 1024


def is_anonymous(user: object, provider: object = None) -> bool:
    """True for the random user jupyter-server's own identity provider makes up for a request
    that proves only the shared token (or no login at all): ``IdentityProvider.
    generate_anonymous_user`` gives ``username = uuid4().hex`` and ``name = display_name =
    "Anonymous <moon of Jupyter>"``. A user from another identity provider (JupyterHub's, a
    deployment's own) is never taken for anonymous."""
    if provider is not None and not type(provider).__module__.startswith("jupyter_server."):
        return False
    username, name = getattr(user, "username", None), getattr(user, "name", None)
    if not isinstance(username, str) or not _HEX_ID.fullmatch(username) or not isinstance(name, str):
        return False
    try:
        from jupyter_server.auth.utils import moons_of_jupyter
    except ImportError:  # pragma: no cover - older jupyter-server
        moons_of_jupyter: list[str] | None = None  # type: ignore[no-redef]
    moon = name.removeprefix("Anonymous ")
    return name.startswith("Anonymous ") and (moons_of_jupyter is None or moon in moons_of_jupyter)


def person_for(user: object, provider: object = None) -> str:
    """The name recorded as ``by`` for a decision posted by *user*: the identity jupyter-server
    knows (a JupyterHub user, a configured provider's name); for its anonymous token user (a
    random hex id, see :func:`is_anonymous`) the operating-system user running the server,
    ``"alice (JupyterLab)"``: whoever holds the token acts as that user."""
    if is_anonymous(user, provider):
        from ..artifact.ledgers import person_name

        return f"{person_name()} (JupyterLab)"
    name = getattr(user, "username", None) or getattr(user, "name", None)
    if not name and isinstance(user, str):
        name = user
    return str(name or "")


class AcademicHandler(_Handler):
    """``GET/POST /dsh/api/academic``."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self._answer(views.academic_status)

    @web.authenticated
    @authorized
    async def post(self) -> None:
        try:
            body = self._body()
        except RouteError as exc:
            return self._refuse(exc)
        await self._answer(views.academic_set, body)


class _NotebookHandler(_Handler):
    async def _for_notebook(self, fn: Callable[..., object], *args: object) -> None:
        try:
            notebook = self._notebook()
        except RouteError as exc:
            return self._refuse(exc)
        await self._answer(fn, notebook, self._root(), *args)


class RecordsHandler(_NotebookHandler):
    """``GET /dsh/api/records?notebook=PATH``."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self._for_notebook(views.records)


class RecordHandler(_NotebookHandler):
    """``GET /dsh/api/records/ID?notebook=PATH``."""

    @web.authenticated
    @authorized
    async def get(self, record_id: str) -> None:
        await self._for_notebook(views.record, record_id)


class SessionsHandler(_NotebookHandler):
    """``GET /dsh/api/sessions?notebook=PATH``."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self._for_notebook(views.sessions)


class ReviewsHandler(_NotebookHandler):
    """``GET /dsh/api/reviews?notebook=PATH``."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self._for_notebook(views.reviews)


class LedgersHandler(_NotebookHandler):
    """``GET /dsh/api/ledgers?notebook=PATH``."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self._for_notebook(views.ledgers)


class LedgerHandler(_NotebookHandler):
    """``GET /dsh/api/ledgers/NAME?notebook=PATH``."""

    @web.authenticated
    @authorized
    async def get(self, name: str) -> None:
        await self._for_notebook(views.ledger, name)


class DecisionHandler(_NotebookHandler):
    """``POST /dsh/api/ledgers/NAME/decision?notebook=PATH`` ``{decision_id, revision, verdict, note}``
    (``revision``: the one the person saw; required)."""

    @web.authenticated
    @authorized
    async def post(self, name: str) -> None:
        try:
            body = self._body()
        except RouteError as exc:
            return self._refuse(exc)
        await self._for_notebook(views.decide, name, body, self._person())


class NoRouteHandler(_Handler):
    """Any other path under ``/dsh/api/`` (the last route): JSON 404 ``{"error": "no such route: ..."}``,
    after the same authentication and authorization as the real routes."""

    def _no_route(self) -> None:
        path = self.request.path
        path = path[path.find("/dsh/api"):] if "/dsh/api" in path else path  # without the server's base_url
        self._refuse(RouteError(404, f"no such route: {self.request.method} {path}; the side panel's routes are "
                                     f"{ROUTE_NAMES}"))

    @web.authenticated
    @authorized
    async def get(self, *args: str) -> None:
        self._no_route()

    @web.authenticated
    @authorized
    async def post(self, *args: str) -> None:
        self._no_route()

    @web.authenticated
    @authorized
    async def put(self, *args: str) -> None:
        self._no_route()

    @web.authenticated
    @authorized
    async def patch(self, *args: str) -> None:
        self._no_route()

    @web.authenticated
    @authorized
    async def delete(self, *args: str) -> None:
        self._no_route()


ROUTE_NAMES = ("/dsh/api/academic, /dsh/api/records[/ID], /dsh/api/sessions, /dsh/api/reviews, "
               "/dsh/api/ledgers[/NAME[/decision]] (each but academic with ?notebook=PATH)")

ROUTES = [
    ("academic", AcademicHandler),
    ("records", RecordsHandler),
    ("records/([^/]+)", RecordHandler),
    ("sessions", SessionsHandler),
    ("reviews", ReviewsHandler),
    ("ledgers", LedgersHandler),
    ("ledgers/([^/]+)", LedgerHandler),
    ("ledgers/([^/]+)/decision", DecisionHandler),
]


def handlers(base_url: str) -> list[tuple[str, type]]:
    """``(pattern, handler)`` for every route under *base_url*, then the catch-all for any other
    path under ``dsh/api`` (tornado takes the first pattern that matches)."""
    routes = [(url_path_join(base_url, "dsh", "api", route), handler) for route, handler in ROUTES]
    return [*routes, (url_path_join(base_url, "dsh", "api") + "(/.*)?", NoRouteHandler)]
