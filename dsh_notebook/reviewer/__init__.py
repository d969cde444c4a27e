"""The reviewer (spec: reviewer.md): a second reader for a conversation. :mod:`.transcript`
is the shared shape of a read conversation; :mod:`.sources` reads each kind of log.
Plain Python: no IPython, no widgets."""
