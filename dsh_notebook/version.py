"""The package's version (spec: storage.md "What goes into the notebook": written into records,
outputs and the ``metadata.dsh`` index), in a module of its own so that any layer can name it without importing
the package root (whose ``load_ipython_extension`` reaches the magics)."""

__version__ = "0.1.0"

#: The version of what ``%%reckon`` displays for a record (``dsh_notebook.reckon.render``):
#: bumped when the same record renders differently, so ``verify`` tells an older rendering from
#: a tampered one. Sealed in every signed seal (issue 15).
RENDERER_VERSION = "reckon-render/4"  # 2: temperature points on their scale, (-3)^2 (issue 17); 3: display units
#: from the inputs, each line's LaTeX in the record output (issue 18); 4: the HTML view drawn by an autoescaped
#: Jinja2 template (quotes written ``&#39;``/``&#34;``, not ``&#x27;``/``&quot;``), and notes and other text in the
#: LaTeX output through the one fixed escaper (``a\b`` is ``a\textbackslash{}b``) (issue 22)

#: The version of the reckoner's rules (grammar, units, dimension checks, number formatting):
#: bumped when the same formula may give another result or refusal. Sealed in every signed seal,
#: and named in each record's ``record_start`` row (``"rules": 2``; absent: 1), so replay and
#: ``verify`` apply the rules a record was written under. 2: temperature points and differences
#: (issue 17). 3: rows may carry display units (``unit`` on set, eval and get rows; ``units``, the
#: preferences, on the start row: issue 18); the numbers are the same as under 2.
ENGINE_RULES = 3
ENGINE_RULES_VERSION = f"reckoner-rules/{ENGINE_RULES}"
