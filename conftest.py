"""Test-session setup shared by tests/ and the nbval notebooks in notebooks/."""

import atexit
import os
import shutil
import tempfile

# Nothing a test or a notebook kernel does may write into a real DSH_NOTEBOOK_HOME (your
# settings, academic mode's state, unsaved records): the whole run gets a temporary home,
# removed at exit, even when the variable is set. Kernels started by nbval inherit it.
os.environ["DSH_NOTEBOOK_HOME"] = tempfile.mkdtemp(prefix="dsh-notebook-test-home-")
atexit.register(shutil.rmtree, os.environ["DSH_NOTEBOOK_HOME"], ignore_errors=True)
# Tests never reach a real model: a key or address from your shell is not used.
for _name in ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "DSH_MODEL"):
    os.environ.pop(_name, None)

# notebooks/evidence-review.ipynb replays the real recorded Crossref responses kept outside the
# project (../shared/fixtures/bibliographic, never copied in): without them it is skipped, saying so.
_FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "shared", "fixtures", "bibliographic")
_NEEDS_FIXTURES = ("evidence-review.ipynb",)


def pytest_collection_modifyitems(config, items):
    import pytest

    shared = os.environ.get("DSH_SHARED_DIR")
    default = os.path.join(shared, "fixtures", "bibliographic") if shared else _FIXTURES
    fixtures = os.environ.get("DSH_BIBLIOGRAPHIC_FIXTURES", default)
    if os.path.isfile(os.path.join(fixtures, "README.md")):
        return
    skip = pytest.mark.skip(reason=f"the recorded bibliographic responses are not at {os.path.abspath(fixtures)} "
                                   "(kept outside the project, in ../shared/fixtures/; set DSH_SHARED_DIR to "
                                   "that shared folder, or DSH_BIBLIOGRAPHIC_FIXTURES to the folder itself)")
    for item in items:
        if os.path.basename(str(item.fspath)) in _NEEDS_FIXTURES:
            item.add_marker(skip)
