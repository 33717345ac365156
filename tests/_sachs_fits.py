"""Sachs fits shared by tests/test_accuracy.py and tests/test_solver_identity.py.

Each (solver, variant) pair is fitted once per test session at the paper's defaults; the
faithful fits take a few seconds each, so the two test files share them instead of fitting twice.
Callers only read the returned estimator.
"""
from functools import lru_cache


@lru_cache(maxsize=None)
def sachs_fit(solver, variant):
    """``(B_true, CoLiDE(variant, solver=solver).fit(X))`` on Sachs (``X`` of shape (853, 11))."""
    from colide_core import CoLiDE, load_sachs

    X, B = load_sachs()
    return B, CoLiDE(variant, solver=solver).fit(X)
