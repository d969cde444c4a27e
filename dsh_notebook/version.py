"""The package's version (spec: storage.md "What goes into the notebook": written into records,
outputs and the ``metadata.dsh`` index), in a module of its own so that any layer can name it without importing
the package root (whose ``load_ipython_extension`` reaches the magics)."""

__version__ = "0.1.0"
