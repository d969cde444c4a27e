"""Test-session setup shared by tests/ and the nbval notebooks in notebooks/."""

import atexit
import os
import shutil
import tempfile

# Nothing a test or a notebook kernel does may write into the real ~/.dsh-notebook:
# kernels started by nbval inherit this environment.
if not os.environ.get("DSH_NOTEBOOK_HOME"):
    os.environ["DSH_NOTEBOOK_HOME"] = tempfile.mkdtemp(prefix="dsh-notebook-test-home-")
    atexit.register(shutil.rmtree, os.environ["DSH_NOTEBOOK_HOME"], ignore_errors=True)
