"""The table of solvers: which stage loop each ``solver`` name runs.

:class:`colide_core.CoLiDE`, :func:`colide_core.solver.path.lambda_path` and the JAX backend
(:func:`colide_core.solver._jax.device_solver`) all pick their CPU loop here, so one place says
which loop a name runs, and neither the estimator nor the backend imports the other for it.
"""
from __future__ import annotations

from colide_core.solver._auto import auto_solve
from colide_core.solver._fast import fast_solve, warmup  # noqa: F401 - warmup: public here
from colide_core.solver._solver import colide_solve
from colide_core.solver._topo import topo_solve

__all__ = ["SOLVERS", "get_solver", "warmup"]

#: Solver name -> stage loop. "auto" (the default, :func:`colide_core.solver._auto.auto_solve`) is
#: the best of the fast solver's point and CoLiDE-TOPO's started from it, when the search fits the
#: budget; "fast" is the fast solver alone (:func:`colide_core.solver._fast.fast_solve`); "adam" is the paper-faithful Algorithm 1
#: (:func:`colide_core.colide_solve`). Both take the same arguments and return a
#: :class:`~colide_core.SolverResult`. "topo" is CoLiDE-TOPO (:func:`colide_core.solver._topo.topo_solve`,
#: paper Appendix E): the same score minimised over topological orders by node swaps, started
#: from the fast solver's solution.
SOLVERS = {"auto": auto_solve, "fast": fast_solve, "adam": colide_solve, "topo": topo_solve}


def get_solver(name):
    """The stage loop registered under ``name`` in :data:`SOLVERS`.

    Parameters
    ----------
    name : {"auto", "fast", "adam", "topo"}

    Returns
    -------
    callable
        ``solve(cov, *, variant, lambda1, mu_schedule, s_schedule, max_iter, lr, tol,
        checkpoint, W_init, callback, max_time, edge_mask, l1_mask, required_mask) -> SolverResult``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`SOLVERS`.
    """
    try:
        return SOLVERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"solver must be one of {sorted(SOLVERS)}, got {name!r}.") from None
