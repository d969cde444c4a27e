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


def _chain(node: ast.expr) -> tuple[str, list[str]] | None:
    """``a.b.c`` -> ``("a", ["b", "c"])``; ``None`` when the chain does not start at a name."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.insert(0, node.attr)
        node = node.value
    return (node.id, attrs) if isinstance(node, ast.Name) else None


def private_uses(path: Path, module: str | None = None) -> list[str]:
    """Uses of another package's private names: ``from X import _name``, ``import X._mod``, and
    through a name bound to a module of the package (``alias._name``, ``alias.mod._name``,
    ``alias.Cls._attr``, ``dsh_notebook.pkg.mod._name``, ``getattr(alias, "_name")``), where the
    module reached is in another package (*module* is the file's dotted name, found from its path
    by default). Private attributes of objects reached any other way cannot be seen here."""
    module = module or _module_name(path)
    here = _package_of(module)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> the dsh_notebook module or name it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, path.name == "__init__.py", node.level, node.module)
            if not source.startswith("dsh_notebook"):
                continue
            for a in node.names:
                target = f"{source}.{a.name}"
                if _package_of(target) in ("", here):
                    continue
                if any(_private(part) for part in target.split(".")[1:]):
                    found.append(f"{path.name}:{node.lineno} imports {target}")
                else:
                    aliases[a.asname or a.name] = target
        elif isinstance(node, ast.Import):
            for a in node.names:
                if not a.name.startswith("dsh_notebook"):
                    continue
                if _package_of(a.name) not in ("", here) and any(_private(p) for p in a.name.split(".")):
                    found.append(f"{path.name}:{node.lineno} imports {a.name}")
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else "dsh_notebook"
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}

    def check(root: str, attrs: list[str], lineno: int) -> None:
        if root not in aliases:
            return
        parts = aliases[root].split(".") + attrs
        if _package_of(".".join(parts)) in ("", here):
            return
        start = len(aliases[root].split("."))
        if any(_private(a) for a in parts[start:]):
            found.append(f"{path.name}:{lineno} uses {'.'.join(parts)}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            chain = _chain(node)
            if chain:
                check(chain[0], chain[1], node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr")
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            chain = _chain(node.args[0])
            if chain:
                check(chain[0], [*chain[1], node.args[1].value], node.lineno)
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_uses_another_packages_private_names(path):
    assert private_uses(path) == []


def test_the_check_finds_a_private_name(tmp_path):
    """The check above can fail: a module of ``server`` using private names of other packages in
    each way it can see (and none of its own package's, nor dunders)."""
    bad = tmp_path / "views.py"
    bad.write_text("from ..notebook.review import _md, review_bundle\nfrom ..artifact import seal as S\n"
                   "from .handlers import _own\nfrom .. import notebook\nimport dsh_notebook.research.ledger\n"
                   "import dsh_notebook.llm.client as C\n"
                   "S._outputs(1, 2)\nS.__name__\nnotebook.magics._x\ndsh_notebook.research.ledger._why(1)\n"
                   "C.ChatClient._post\ngetattr(S, '_outputs')\n_own.x\nS.sync(review_bundle)\n")
    assert sorted(f.split(":", 1)[1] for f in private_uses(bad, "dsh_notebook.server.views")) == [
        "1 imports dsh_notebook.notebook.review._md",
        "10 uses dsh_notebook.research.ledger._why",
        "11 uses dsh_notebook.llm.client.ChatClient._post",
        "12 uses dsh_notebook.artifact.seal._outputs",  # getattr(S, '_outputs')
        "7 uses dsh_notebook.artifact.seal._outputs",
        "9 uses dsh_notebook.notebook.magics._x",
    ]


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


# ------------------------------------------------------------------ the engine is pure (issue 22 item 1)

#: Modules that start or look for programs; the engine never imports them (the article build finds
#: and runs ``latexmk`` from dsh_notebook.artifact.articles).
PROGRAM_MODULES = {"subprocess", "multiprocessing", "pty", "shutil", "asyncio"}
#: ``os`` functions that start programs.
OS_PROGRAM_CALLS = {"system", "popen", "spawnl", "spawnlp", "spawnv", "spawnvp", "execv", "execvp", "execl",
                    "execlp", "fork", "forkpty", "posix_spawn", "posix_spawnp", "startfile"}


def _prompt_texts() -> dict[str, str]:
    """Every model prompt the package sends, by name: a prompt is identified by its first line."""
    from dsh_notebook.llm import article_prompt, presets
    from dsh_notebook.llm.search import extract

    return {"WRITER_RULES": article_prompt.WRITER_RULES, "WRITER_RULES_MARKDOWN": article_prompt.WRITER_RULES_MARKDOWN,
            "WRITER_RULES_LATEX": article_prompt.WRITER_RULES_LATEX, "EXTRACT_SYSTEM": extract.EXTRACT_SYSTEM,
            **{f"presets.{name}": value for name, value in vars(presets).items()
               if isinstance(value, str) and len(value) > 200 and not name.startswith("__")}}  # the persona's


def engine_faults(path: Path, prompts: dict[str, str]) -> list[str]:
    """What makes an engine module impure: an import of a module that starts programs, a call of
    an ``os`` function that does, a module-level name of a prompt (``*PROMPT*``, ``*PERSONA*``)
    or the first line of a model prompt of ``prompts`` in its text."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{path.name}:{node.lineno} imports {a.name}" for a in node.names
                      if a.name.split(".")[0] in PROGRAM_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in PROGRAM_MODULES:
                found.append(f"{path.name}:{node.lineno} imports {node.module}")
            elif node.module == "os":
                found += [f"{path.name}:{node.lineno} imports os.{a.name}" for a in node.names
                          if a.name in OS_PROGRAM_CALLS]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in OS_PROGRAM_CALLS:
            found.append(f"{path.name}:{node.lineno} uses os.{node.attr}")
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        for t in targets:
            if isinstance(t, ast.Name) and any(w in t.id.upper() for w in ("PROMPT", "PERSONA")):
                found.append(f"{path.name}:{node.lineno} defines {t.id}")
    for name, prompt in prompts.items():
        first = prompt.strip().splitlines()[0].rstrip("\\ ")[:60]
        if first and first in text:
            found.append(f"{path.name} holds the model prompt {name} ({first!r})")
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "reckoner").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_engine_runs_no_program_and_holds_no_model_prompt(path):
    """Issue 22 item 1: the engine is pure: the article build's ``latexmk`` and the model
    writer's prompt live above it (dsh_notebook.artifact.articles, dsh_notebook.llm.article_prompt)."""
    assert engine_faults(path, _prompt_texts()) == []


def test_the_engine_check_finds_programs_and_prompts(tmp_path):
    """The check above can fail: each kind of fault it looks for, in one module."""
    from dsh_notebook.llm.article_prompt import WRITER_RULES

    bad = tmp_path / "bad.py"
    bad.write_text("import subprocess\nfrom os import system\nimport os\nos.popen('x')\nfrom shutil import which\n"
                   f"WRITER_PROMPT_VERSION = 'x/1'\nTEXT = {WRITER_RULES[:80]!r}\n", encoding="utf-8")
    assert sorted(engine_faults(bad, {"WRITER_RULES": WRITER_RULES})) == [
        "bad.py holds the model prompt WRITER_RULES ('You write a short technical article from the facts of one fi')",
        "bad.py:1 imports subprocess",
        "bad.py:2 imports os.system",
        "bad.py:4 uses os.popen",
        "bad.py:5 imports shutil",
        "bad.py:6 defines WRITER_PROMPT_VERSION",
    ]
