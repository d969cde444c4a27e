"""Public case P14 (computationalmodelling/nbval#102): a notebook showing a widget is run
under nbval. Expected: it passes; the widget view is not compared, its deterministic
``text/plain`` fallback is. The kind covers every widget this package displays: the
academic toggle, the live view of a ``%%chat`` turn, the reviewer panel and the ledger explorer."""

from __future__ import annotations

import subprocess
import sys

import nbformat
from nbclient import NotebookClient

CELLS = [
    "from dsh_notebook.widgets import AcademicToggle, ChatView\nAcademicToggle()",
    "ChatView('main · plain · deepseek-chat')",
    "from IPython.display import display\nview = ChatView('x')\ndisplay(view)\nview.add_text('streamed text')\n"
    "view.refresh()\nview.finish('completed')",
    "from dsh_notebook.reviewer.runner import Reviewer\nfrom dsh_notebook.widgets import ReviewerPanel\n"
    "ReviewerPanel(Reviewer())",
    "import tempfile\nfrom dsh_notebook.widgets import LedgerExplorer\n"
    "LedgerExplorer(notebook=tempfile.mkdtemp() + '/study.ipynb')",
]


def test_case_P14_widgets_compare_equal_under_nbval(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells for o in c.outputs]
    assert [o["data"]["text/plain"] for o in outputs] == [
        "[academic mode toggle]", "[live view of this chat turn; the answer follows]",
        "[live view of this chat turn; the answer follows]", "[reviewer panel]",
        "[research ledger explorer]"]
    assert all("application/vnd.jupyter.widget-view+json" in o["data"] for o in outputs)
    path = tmp_path / "widgets.ipynb"
    nbformat.write(nb, str(path))
    # run it again under nbval: the model ids differ, the fallbacks do not
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
                        "--nbval-current-env", str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "5 passed" in r.stdout
