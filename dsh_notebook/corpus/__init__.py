"""A lab's whole corpus: run and verify many notebooks, in this process or on dask.distributed
(issue 23). Between the command line and the artifact layer: no IPython, no widgets.

- :mod:`.discover`: the notebooks named by files and folders (checkpoints and sidecars skipped);
- :mod:`.execute`: one notebook run (nbclient, per-kernel environment, a kernel that dies with
  its worker) or verified, as a task; the workers' check before the work starts;
- :mod:`.kernel_launcher`: the script that ties a kernel's life to its worker (Linux);
- :mod:`.cluster`: the corpus on a ``LocalCluster`` or an existing scheduler, one task per
  notebook, a task lost with its worker retried once;
- :mod:`.report`: the table, the failures and the JSON.

``dask.distributed`` and ``tqdm`` are imported only when used (the ``corpus`` extra).
Submodules are imported by name; importing the package loads none of them.
"""
