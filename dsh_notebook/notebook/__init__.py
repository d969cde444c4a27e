"""The magics' layer (spec: reckoner.md section 2, llm.md "``%%chat``", academic.md "State and
surface", reviewer.md "Surface", research.md "The explorer"): ``%%reckon``, ``%%chat``,
``%academic``, ``%review``, ``%ledger``, their option parsing (one way for all: :mod:`.args`) and their outputs. The notebook's
path and sidecar layout, sync/verify and the ledger views live in :mod:`dsh_notebook.artifact`;
the kernel's shared objects in :mod:`dsh_notebook.kernel`. Imports IPython only in ``magics``
(and ``chat``/``ledger`` for display)."""
