"""The notebook layer: magics, the notebook's path and sidecar layout, outputs
(spec: reckoner.md section 2, storage.md). Imports IPython only in ``magics``."""
