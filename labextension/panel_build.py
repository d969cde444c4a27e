"""Build the JupyterLab side panel in a temporary folder (issue 22, item 7: ``pip install .`` left
about 454 MB of ``labextension/node_modules`` in the checkout).

Build-time only: hatch-jupyter-builder calls :func:`build` while the wheel is built
(``[tool.hatch.build.hooks.jupyter-builder]`` in ``pyproject.toml``); it is not part of the
installed package.

- ``labextension/`` is copied (without ``node_modules``, ``lib`` and ``*.tsbuildinfo``) into a
  temporary folder, and hatch-jupyter-builder's own ``npm_builder`` runs ``npm install`` and
  ``npm run build`` there. The built extension (``package.json``'s ``jupyterlab.outputDir``,
  ``../dsh_notebook/labextension``) is then copied to the same place in the checkout, which the
  wheel ships; the temporary folder, with its ``node_modules``, is removed.
- A developer who ran ``npm install`` in ``labextension/`` keeps that set-up: with a
  ``labextension/node_modules`` folder present the build runs in place, as ``npm_builder`` does.
- ``--skip-npm`` and ``HATCH_JUPYTER_BUILDER_SKIP_NPM=1`` skip the build, as with ``npm_builder``.

Raises ``RuntimeError`` when npm ran but the built extension is not where ``outputDir`` says.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

SKIPPED = ("node_modules", "lib", "*.tsbuildinfo")


def build(target_name: str, version: str, path: str = "labextension", **kwargs: Any) -> None:
    """hatch-jupyter-builder's build function: ``npm_builder``'s arguments (``build_cmd``,
    ``npm``, ...) are passed on; *path* is the node package (``labextension``)."""
    from hatch_jupyter_builder.utils import npm_builder

    src = Path(path).resolve()
    skip = "--skip-npm" in sys.argv or os.environ.get("HATCH_JUPYTER_BUILDER_SKIP_NPM") == "1"
    if skip or (src / "node_modules").is_dir():  # skipped, or a developer's own npm set-up: in place
        npm_builder(target_name, version, path=str(src), **kwargs)
        return
    output_dir = json.loads((src / "package.json").read_text(encoding="utf-8"))["jupyterlab"]["outputDir"]
    dest = (src / output_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="dsh-notebook-panel-") as tmp:
        work = Path(tmp) / src.name
        shutil.copytree(src, work, ignore=shutil.ignore_patterns(*SKIPPED))
        npm_builder(target_name, version, path=str(work), **kwargs)
        built = (work / output_dir).resolve()
        if not (built / "package.json").is_file():
            raise RuntimeError(f"the side panel was built, but not into {built} (package.json's jupyterlab.outputDir "
                               f"{output_dir!r}): nothing was copied to {dest}")
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(built, dest)
