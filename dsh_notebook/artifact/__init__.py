"""A notebook and its folder as one research artifact (spec: storage.md "Where the kernel
writes", "Sync and verify"; research.md "The explorer"). No IPython, no widgets, no model
client: shared by the magics, the widgets, the server's routes and the command line.

- :mod:`.paths`: which notebook a kernel belongs to and where its sidecar ``<stem>.dsh/`` is;
- :mod:`.records`: the calculation records of a sidecar as rows and text;
- :mod:`.seal`: ``sync`` (seals into ``metadata.dsh``) and ``verify`` (the four checks);
- :mod:`.ledgers`: a notebook's research ledgers for people (summaries, the person's decision,
  export, the graph).
- :mod:`.articles`: a record's article as a file in the sidecar, and its PDF build (``latexmk``).

Submodules are imported by name; importing the package loads none of them.
"""
