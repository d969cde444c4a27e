"""The package's version, in a module of its own so that any layer can name it without importing
the package root (whose ``load_ipython_extension`` reaches the magics)."""

__version__ = "0.1.0"
