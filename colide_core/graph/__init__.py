"""Graphs: DAG helpers (:mod:`._dag`), prior knowledge (:mod:`.constraints`) and graph formats:
writing (:mod:`.export`: GraphML, DOT, node-link JSON, DAGitty, CSV) and reading reference graphs
(:mod:`.reference`). Convention: ``W[i, j] != 0`` means the edge i -> j.
"""

from colide_core import _lazy_submodules

__getattr__ = _lazy_submodules(__name__)  # ``colide_core.<sub>.<module>`` imports on first use
