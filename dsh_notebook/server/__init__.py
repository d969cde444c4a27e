"""The jupyter-server extension behind the side panel (spec: storage.md "Routes for the side
panel", and "What goes into the notebook" for the index written on save).

* Enabled on install: the wheel ships ``etc/jupyter/jupyter_server_config.d/dsh_notebook.json``
  (``jpserver_extensions: {"dsh_notebook": true}``); ``dsh_notebook._jupyter_server_extension_points``
  points here and jupyter-server calls :func:`_load_jupyter_server_extension`.
* Routes under the server's ``base_url`` (:mod:`.handlers`; shapes in :mod:`.views`):
  ``/dsh/api/academic`` (GET, POST), ``/dsh/api/records[/ID]``, ``/dsh/api/sessions``,
  ``/dsh/api/reviews``, ``/dsh/api/ledgers[/NAME]`` and ``POST /dsh/api/ledgers/NAME/decision``,
  all behind jupyter-server's authentication, authorizer and XSRF check; any other path under
  ``/dsh/api/`` gets a JSON 404 ``{"error": "no such route: ..."}`` (behind the same checks).
* :func:`pre_save_hook` writes the ``metadata.dsh`` index into a notebook as it is saved, as
  ``dsh-notebook sync`` does (``artifact.seal.sync_node``); it never stops a save.
* Nothing here imports jupyter_server or tornado until the server loads the extension, so
  ``import dsh_notebook`` stays light.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

__all__ = ["pre_save_hook"]

log = logging.getLogger(__name__)

_DSH_MIME_PREFIX = "application/vnd.dsh."


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "dsh_notebook.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the routes and install the pre-save hook (called by jupyter-server)."""
    from ..academic import register_llm_hooks
    from .handlers import handlers

    register_llm_hooks()

    web_app = serverapp.web_app
    web_app.add_handlers(".*$", handlers(web_app.settings["base_url"]))
    install_pre_save_hook(serverapp.contents_manager, serverapp.log)
    serverapp.log.info("dsh_notebook: side panel routes under %sdsh/api/", web_app.settings["base_url"])


def install_pre_save_hook(contents_manager: Any, logger: logging.Logger | None = None) -> bool:
    """Run :func:`pre_save_hook` on every save. A hook the user configured
    (``ContentsManager.pre_save_hook``) is kept and still runs first: ours is added with
    ``register_pre_save_hook``. Returns whether ours is installed."""
    logger = logger or log
    theirs = getattr(contents_manager, "pre_save_hook", None)
    registered = list(getattr(contents_manager, "_pre_save_hooks", None) or [])
    if theirs is pre_save_hook or pre_save_hook in registered:
        return True
    register = getattr(contents_manager, "register_pre_save_hook", None)
    if callable(register):
        register(pre_save_hook)
        if theirs is not None:
            logger.info("dsh_notebook: your pre_save_hook %s is kept; the metadata.dsh index is written after it",
                        getattr(theirs, "__name__", theirs))
        return True
    if theirs is None:
        contents_manager.pre_save_hook = pre_save_hook
        return True
    logger.warning("dsh_notebook: a pre_save_hook (%s) is already set and this contents manager cannot run "
                   "two, so saving does not write the metadata.dsh index; run dsh-notebook sync instead",
                   getattr(theirs, "__name__", theirs))
    return False


def _os_path(contents_manager: Any, path: str) -> Path | None:
    get = getattr(contents_manager, "_get_os_path", None)
    if callable(get):
        return Path(get(path))
    root = getattr(contents_manager, "root_dir", None)
    return Path(root, path.strip("/")) if root else None


def _has_dsh(nb: dict[str, Any], notebook: Path) -> bool:
    """Whether the notebook is a dsh artifact: a sidecar folder, an index, or a dsh output."""
    from ..artifact.paths import sidecar_for

    if sidecar_for(notebook).is_dir() or "dsh" in (nb.get("metadata") or {}):
        return True
    return any(key.startswith(_DSH_MIME_PREFIX) for cell in nb.get("cells") or [] if cell.get("cell_type") == "code"
               for out in cell.get("outputs") or [] for key in (out.get("data") or {}))


def pre_save_hook(model: object, path: str, contents_manager: Any, **kwargs: Any) -> None:
    """jupyter-server's pre-save hook: for a notebook that has a sidecar folder, an index or a
    dsh output, write the ``metadata.dsh`` index (and each producing cell's) into the model's
    content, exactly as ``dsh-notebook sync``. Any failure is logged and the notebook is saved
    unchanged; other notebooks are left alone."""
    try:
        if not isinstance(model, dict) or model.get("type") != "notebook" or not isinstance(model.get("content"),
                                                                                            dict):
            return
        notebook = _os_path(contents_manager, path)
        if notebook is None:
            return
        import nbformat

        from ..artifact.seal import sync_node

        nb = nbformat.from_dict(copy.deepcopy(model["content"]))
        if not _has_dsh(nb, notebook):
            return
        from ..artifact.notebookfile import NotebookBusy, notebook_lock
        from ..artifact.seal import SealRefused

        problems: list[str] = []
        try:
            with notebook_lock(notebook, timeout=10):  # never interleaved with a run, sync or prune of it
                sync_node(nb, notebook, problems)
        except (SealRefused, NotebookBusy) as exc:  # nothing is changed; the save goes on
            log.warning("dsh_notebook: %s: %s", path, exc)
            return
        for p in problems:  # the old seal is kept; the save goes on
            log.warning("dsh_notebook: %s: %s", path, p)
        model["content"] = nb
    except Exception:
        log.warning("dsh_notebook: the metadata.dsh index of %s was not updated; the notebook is saved unchanged "
                    "(run dsh-notebook sync to see why)", path, exc_info=True)
