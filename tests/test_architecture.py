"""The package's layers as code sees them (issue 13; README "Architecture"). The import layers
themselves are import-linter contracts in pyproject.toml, checked by ``lint-imports`` in CI;
this file checks what import-linter cannot: no module uses another package's private names.

"Another package" is another first-level package of ``dsh_notebook`` (``llm``, ``notebook``,
``research``...): inside one package, modules share their private helpers freely.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

PACKAGE = Path(importlib.util.find_spec("dsh_notebook").origin).parent


def _package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(path: Path, module: str | None = None) -> list[str]:
    """``from X import _name``, ``import X._mod`` and ``alias._name`` where X is in another package
    (*module* is the file's dotted name, found from its path by default)."""
    module = module or _module_name(path)
    here = _package_of(module)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> module it stands for (another package's)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, path.name == "__init__.py", node.level, node.module)
            if not source.startswith("dsh_notebook") or _package_of(source) in ("", here):
                continue
            if any(_private(part) for part in source.split(".")):
                found.append(f"{path.name}:{node.lineno} imports from {source}")
            for a in node.names:
                if _private(a.name):
                    found.append(f"{path.name}:{node.lineno} imports {source}.{a.name}")
                else:
                    aliases[a.asname or a.name] = f"{source}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("dsh_notebook") and _package_of(a.name) not in ("", here):
                    if any(_private(part) for part in a.name.split(".")):
                        found.append(f"{path.name}:{node.lineno} imports {a.name}")
                    aliases[a.asname or a.name.split(".")[0]] = a.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and _private(node.attr)):
            found.append(f"{path.name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_uses_another_packages_private_names(path):
    assert private_uses(path) == []


def test_the_check_finds_a_private_name(tmp_path):
    """The check above can fail: a module of ``server`` using private names of ``notebook`` and ``artifact``."""
    bad = tmp_path / "views.py"
    bad.write_text("from ..notebook.review import _md, review_bundle\nfrom ..artifact import seal as S\n"
                   "from .handlers import _own\nS._outputs(1, 2)\nS.__name__\n")
    assert [f.split(" ", 1)[1] for f in private_uses(bad, "dsh_notebook.server.views")] == [
        "imports dsh_notebook.notebook.review._md", "uses dsh_notebook.artifact.seal._outputs"]


def test_every_client_gets_academic_mode_without_llm_importing_it():
    """Academic mode's hooks reach a client made with the defaults through the entry point group
    ``dsh_notebook.llm_hooks``; importing the client alone loads no feature."""
    import subprocess
    import sys

    code = ("import sys\nimport dsh_notebook.llm.client as c\nimport dsh_notebook.llm.agent as a\n"
            "assert not [m for m in sys.modules if m.startswith(('dsh_notebook.academic', 'dsh_notebook.reviewer',"
            " 'dsh_notebook.research_pipeline', 'dsh_notebook.notebook', 'IPython'))], sorted(sys.modules)\n"
            "hooks = c.ChatClient(model='deepseek/deepseek-chat').hooks\n"
            "from dsh_notebook.academic.shaping import academic_hook\nfrom dsh_notebook.academic.gate import academic_gate\n"
            "assert hooks == [academic_hook], hooks\nassert a.default_stop_hooks() == [academic_gate]\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
