"""Start a kernel that dies with the process that started it (issue 23, item 2: "a killed
worker's kernel is shut down ... before the retry").

Run as a script, never imported for its work: ``python kernel_launcher.py PARENT_PID ARGV...``.

* jupyter_client starts every kernel in a session of its own (``start_new_session``), so a
  SIGKILLed dask worker would leave its kernel running: still executing the notebook, still
  holding the sidecar's open-record lock.
* On Linux this launcher asks the kernel to be sent SIGKILL when its parent dies
  (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, kept across ``execve``), checks the parent is still the
  one that started it (it may have died before the ``prctl``), then replaces itself with the
  kernel's own command line: the kernel process is this process, with the same pid and the
  connection file and environment jupyter_client gave it.
* Elsewhere (no ``prctl``) it only ``exec``s the kernel: the launcher is not used there
  (:func:`dsh_notebook.corpus.execute.launcher_argv` gives no prefix).

It imports nothing of dsh_notebook, so it adds an interpreter start and no package import.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: kernel_launcher.py PARENT_PID KERNEL_ARGV...", file=sys.stderr)
        return 2
    parent = int(argv[0])
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        print(f"kernel_launcher: prctl(PR_SET_PDEATHSIG) failed: {os.strerror(err)}", file=sys.stderr)
        return 1
    if os.getppid() != parent:  # the parent died before the prctl: nobody would stop this kernel
        return 1
    os.execvp(argv[1], argv[1:])
    return 1  # pragma: no cover - execvp does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
