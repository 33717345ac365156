"""Running: run manifests (:mod:`.manifest`), the sweep executor with its local and Dask backends
(:mod:`.executor`) and the command-line interface (:mod:`.cli`, ``colide`` / ``python -m colide_core``).
"""

from colide_core import _lazy_submodules

__getattr__ = _lazy_submodules(__name__)  # ``colide_core.<sub>.<module>`` imports on first use
