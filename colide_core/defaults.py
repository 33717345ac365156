"""Every default of the CoLiDE solvers, written once.

The estimator, both solver loops, the λ path, bootstrap, stability selection, the CLI and the
dashboard's widgets read their defaults and bounds from here, so a default changes in one place.

Values are the paper's (Saboksayr, Mateos, Tepper, ICLR 2024, Appendix D: Algorithm 1 with
``mu = (1, 0.1, 0.01, 0.001)``, ``s = (1, 0.9, 0.8, 0.7)``, ``T = (2e4, 2e4, 2e4, 7e4)``, Adam
with step 3e-4 and betas (0.99, 0.999); ``lambda1 = 0.05`` and the 0.3 magnitude threshold of
Section 5).
"""
from __future__ import annotations

__all__ = [
    "VARIANTS", "VARIANT", "SOLVERS", "LAMBDA1", "THRESHOLD", "MU_SCHEDULE", "S_SCHEDULE", "MAX_ITER", "LR", "TOL",
    "CHECKPOINT", "BETA_1", "BETA_2", "SOLVER", "LAMBDA1_RANGE", "THRESHOLD_RANGE", "TOPO_SIZES",
]

#: Score variants: equal noise variance (eq. 4), non-equal variances (eq. 6), least squares.
VARIANTS = ("ev", "nv", "ls")
#: Default variant (non-equal noise variances, the more general model).
VARIANT = "nv"
#: Solver names accepted by ``CoLiDE(solver=...)``; "auto" is the fast solver, "topo" the search
#: over topological orders (CoLiDE-TOPO, paper Appendix E).
SOLVERS = ("auto", "fast", "adam", "topo")
#: Default solver.
SOLVER = "auto"
#: L1 weight λ (Section 5).
LAMBDA1 = 0.05
#: Post-processing magnitude threshold on |W| (Section 5).
THRESHOLD = 0.3
#: Central-path weights μ_k, one per stage (Appendix D).
MU_SCHEDULE = (1.0, 0.1, 0.01, 0.001)
#: Log-det parameters s_k, one per stage (Appendix D).
S_SCHEDULE = (1.0, 0.9, 0.8, 0.7)
#: Maximum iterations T_k, one per stage (Appendix D).
MAX_ITER = (20000, 20000, 20000, 70000)
#: Adam step size.
LR = 3e-4
#: Relative objective change between checkpoints that ends a stage.
TOL = 1e-6
#: Steps between convergence checks, history entries and callback calls.
CHECKPOINT = 1000
#: Adam moment decay rates.
BETA_1 = 0.99
BETA_2 = 0.999
#: CoLiDE-TOPO's candidate-set sizes ``(s0, s_small, s_large)``: TOPO's defaults (Deng et al.,
#: ICML 2023), as used in the CoLiDE paper's Appendix E.
TOPO_SIZES = (10, 100, 1000)

#: Range of λ offered by the dashboard's widgets (inclusive); the library accepts any λ >= 0.
LAMBDA1_RANGE = (0.0, 10.0)
#: Range of the threshold offered by the dashboard's widgets (inclusive).
THRESHOLD_RANGE = (0.0, 2.0)
