"""The solver: CoLiDE's objective, its stage loops, the estimator and the λ path.

* :mod:`._objective`: the pure functions (scores, ``h_ldet``, σ updates, the stage objective), each
  returning ``(value, grad)``: the paper's eq. 3-7, written once;
* :mod:`._common`: the set-up and finish both loops share, and the :class:`SolverResult` record;
* :mod:`._solver` (Algorithm 1, paper-faithful), :mod:`._fast` (the fast loop) and :mod:`._topo`
  (CoLiDE-TOPO, Appendix E): the loops;
* :mod:`._estimator`: the thin scikit-learn estimator :class:`colide_core.CoLiDE`;
* :mod:`.path`: CoLiDE along a grid of ``lambda1``, warm-started.

Nothing here imports :mod:`colide_core.run` or :mod:`colide_core.render` (``tests/test_layout.py``).
"""

from colide_core import _lazy_submodules

__getattr__ = _lazy_submodules(__name__)  # ``colide_core.<sub>.<module>`` imports on first use
