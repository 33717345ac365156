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
    "CHECKPOINT", "BETA_1", "BETA_2", "SOLVER", "LAMBDA1_RANGE", "THRESHOLD_RANGE", "LR_RANGE", "TOL_RANGE",
    "CHECKPOINT_RANGE", "MAX_TIME_RANGE", "MAX_STAGES", "MAX_ITER_TOTAL", "MAX_CHECKPOINTS",
]

#: Score variants: equal noise variance (eq. 4), non-equal variances (eq. 6), least squares.
VARIANTS = ("ev", "nv", "ls")
#: Default variant (non-equal noise variances, the more general model).
VARIANT = "nv"
#: Solver names accepted by ``CoLiDE(solver=...)``; "auto" is the fast solver.
SOLVERS = ("auto", "fast", "adam")
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

#: Range of λ offered by the dashboard's widgets (inclusive); the library accepts any λ >= 0.
LAMBDA1_RANGE = (0.0, 10.0)
#: Range of the threshold offered by the dashboard's widgets (inclusive).
THRESHOLD_RANGE = (0.0, 2.0)

# --- bounds of the interactive (shared-server) run settings ----------------------------------
# The library accepts any value its parameter checks allow; the dashboard, where a setting may
# come from another person's manifest, also keeps every fit inside these bounds
# (colide_core.manifest.check_run_settings), so no setting can start a fit that never ends.

#: Adam step size (inclusive).
LR_RANGE = (1e-6, 1.0)
#: Convergence tolerance (inclusive); 0 would make every stage run its full budget.
TOL_RANGE = (1e-12, 0.1)
#: Steps between checkpoints (inclusive): Stop and the session check are answered at checkpoints.
CHECKPOINT_RANGE = (1, 10_000)
#: Wall-clock budget ``max_time`` in seconds (exclusive low, inclusive high), when given.
MAX_TIME_RANGE = (0.0, 3600.0)
#: Most stages (entries of ``mu_schedule``, ``s_schedule`` and ``max_iter``).
MAX_STAGES = 10
#: Ceiling on the total iteration budget of one fit, ``sum(max_iter)`` (about 4x the paper's 130,000).
MAX_ITER_TOTAL = 500_000
#: Ceiling on the checkpoints one fit records, ``sum(max_iter) / checkpoint`` (bounds its history).
MAX_CHECKPOINTS = 10_000
