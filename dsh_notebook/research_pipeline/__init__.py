"""The research pipeline (spec: research.md "Running the roles"; "Fold and
predicates" for what it may propose): everything of the research feature that talks to a model or the network,
built on the pure ledger core in :mod:`dsh_notebook.research`.

Layer: above :mod:`dsh_notebook.llm` (it is handed a model client, or a ``client_factory``) and
:mod:`dsh_notebook.net` (full texts through its checked fetcher, the bibliographic services under
its retry policy); below the magics, the widgets and the CLI. The
ledger core never imports this package.

- :mod:`.roles`: ``run_role`` (one role end to end, prompts ``research-roles/*``, pydantic outputs);
- :mod:`.router`: the deterministic risk router (tiers, token budget from ``[research]``);
- :mod:`.pipeline`: ``ask`` (``%ledger ask``'s nine stages, no IPython);
- :mod:`.bibliographic`: ``check_source`` (Crossref, arXiv, PubMed; typed verdicts);
- :mod:`.fulltext`: ``link_fulltext`` (public URLs and files in the notebook's folder only);
- :mod:`.tools`: the lead's five tools for ``%%chat --preset research``;
- :mod:`.testing`: a fake Crossref/arXiv/PubMed server for tests and demos.

Submodules are imported by name (``from dsh_notebook.research_pipeline.pipeline import ask``);
importing the package itself loads none of them.
"""
