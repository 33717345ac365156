"""Evaluation: metrics against a truth (:mod:`._metrics`: SHD, SHD-C, SID, FDR, TPR), threshold and
ROC curves (:mod:`.curves`), bootstrap and stability selection (:mod:`.stability`), the peer
methods (:mod:`.baselines`), the model checks that need no truth (:mod:`.checks`), predicted
interventions (:mod:`.interventions`), local IDA on an equivalence class (:mod:`.ida`) and the
planning of the next experiment (:mod:`.planning`: interventional essential graphs, a ranking of
single-node interventions).
"""

from colide_core import _lazy_submodules

__getattr__ = _lazy_submodules(__name__)  # ``colide_core.<sub>.<module>`` imports on first use
