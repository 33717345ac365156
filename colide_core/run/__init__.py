"""Running: run manifests (:mod:`.manifest`), the sweep executor with its local and Dask backends
(:mod:`.executor`) and the command-line interface (:mod:`.cli`, ``colide`` / ``python -m colide_core``).
"""
