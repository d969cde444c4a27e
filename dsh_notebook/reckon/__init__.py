"""The ``%%reckon`` cell language without IPython (spec: reckoner.md section 2): the line
grammar and the cell runner (:mod:`.cell`), the renderer (:mod:`.render`) and the unit reader
(:mod:`.units`).

Below the notebook layer so that ``verify`` (:mod:`dsh_notebook.artifact`) can run a cell's
lines again and render its record with the very code the magic used (issue 15, check 7).
"""
