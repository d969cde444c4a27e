"""The package's version (spec: storage.md "What goes into the notebook": written into records,
outputs and the ``metadata.dsh`` index), in a module of its own so that any layer can name it without importing
the package root (whose ``load_ipython_extension`` reaches the magics)."""

__version__ = "0.1.0"

#: The version of what ``%%reckon`` displays for a record (``dsh_notebook.reckon.render``):
#: bumped when the same record renders differently, so ``verify`` tells an older rendering from
#: a tampered one. Sealed in every signed seal (issue 15).
RENDERER_VERSION = "reckon-render/1"

#: The version of the reckoner's rules (grammar, units, dimension checks, number formatting):
#: bumped when the same formula may give another result or refusal. Sealed in every signed seal.
ENGINE_RULES_VERSION = "reckoner-rules/1"
