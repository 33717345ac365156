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
    "CHECKPOINT", "BETA_1", "BETA_2", "SOLVER", "LAMBDA1_RANGE", "THRESHOLD_RANGE",
    "MAX_ITER_LIMIT", "MAX_NODES", "MAX_SAMPLES", "MAX_CELLS", "MAX_DEGREE", "MAX_SWEEP_RUNS",
    "MAX_PATH_LAMBDAS", "MAX_PATH_THRESHOLDS", "MAX_RESAMPLES", "LR_RANGE", "TOL_RANGE",
    "CHECKPOINT_RANGE", "MAX_TIME_RANGE", "MAX_STAGES", "MAX_ITER_TOTAL", "MAX_CHECKPOINTS", "MAX_RETRIES", "MAX_TOPO_SIZE", "TOPO_SIZES",
    "TOPO_CACHE_BYTES", "TOPO_CACHE_SLOTS_PER_D2",
    "MAX_RECORD_W_CELLS", "SIM_W_RANGE", "DEVICES", "DEVICE", "AUTO_GPU_MIN_NODES", "AUTO_BUDGET",
]

#: Score variants: equal noise variance (eq. 4), non-equal variances (eq. 6), least squares.
VARIANTS = ("ev", "nv", "ls")
#: Default variant (non-equal noise variances, the more general model).
VARIANT = "nv"
#: Solver names accepted by ``CoLiDE(solver=...)``; "auto" is the fast solver, "topo" the search
#: over topological orders (CoLiDE-TOPO, paper Appendix E).
SOLVERS = ("auto", "fast", "adam", "topo")
#: Default solver: the best optimum of the score the budget allows (issue 51,
#: ``colide_core.solver._auto``): the fast solver, then CoLiDE-TOPO's order search when its
#: predicted cost fits :data:`AUTO_BUDGET`, the candidate with the lowest score returned.
SOLVER = "auto"
#: Seconds ``solver="auto"`` may spend on the order search when no ``max_time`` is given, in
#: reference seconds (:func:`colide_core.solver._topo_cost.reference_search_seconds`, a function of
#: the number of nodes, so the choice never depends on the machine or its load): the search runs
#: up to 71 nodes (2.5 d^2 swap evaluations, 19.7 s at d = 71), 59 with a warm start (two
#: searches), the fast solver alone above.
AUTO_BUDGET = 20.0
#: Where the stage loops run (``CoLiDE(device=...)``, issue 33, ``docs/gpu.md``): "cpu" the numpy /
#: numba solvers; "gpu" the JAX backend on a GPU (an error when JAX or a GPU is missing); "auto"
#: the GPU when JAX sees one, else "cpu"; "jax-cpu" the JAX backend on the CPU (tests, CI and
#: side-by-side comparisons).
DEVICES = ("cpu", "gpu", "auto", "jax-cpu")
#: Default device: today's numpy / numba path, unchanged.
DEVICE = "cpu"
#: ``device="auto"`` runs on a GPU from this many nodes up (below it a GPU step is launch-bound and
#: no faster than one CPU core: issue 33's table, 0.9x at d = 100, 4.5x at d = 200; with issue 50's
#: whole loop an H200 fitted d = 200 in 1.8 s against 5.5 s on one of its host's CPU threads).
AUTO_GPU_MIN_NODES = 200
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
#: CoLiDE-TOPO's node cache (issue 32): solved node problems kept by (node, predecessor set), at
#: most this many bytes per search (a direct-mapped table; ``2 n_nodes + 7`` floats a slot; the
#: memory bound: 256 MiB holds 2**17 slots at d = 100, 2**16 at d = 200).
TOPO_CACHE_BYTES = 256 * 2 ** 20
#: ... and the slots wanted per ``n_nodes**2`` (rounded up to a power of two, then capped by
#: ``TOPO_CACHE_BYTES``): a search poses about 3-10 d**2 distinct node problems (measured 25,632
#: at d = 50, 54,335 at d = 100, 106,857 at d = 200; docs/topo.md), and a direct-mapped table
#: keeps most of them only with about twice as many slots. ``colide_core.solver._topo.cache_slots``.
TOPO_CACHE_SLOTS_PER_D2 = 16

#: Range of λ offered by the dashboard's widgets (inclusive); the library accepts any λ >= 0.
LAMBDA1_RANGE = (0.0, 10.0)
#: Range of the threshold offered by the dashboard's widgets (inclusive).
THRESHOLD_RANGE = (0.0, 2.0)


# --------------------------------------------------------------------------------------------
# Limits: the most work any single input may ask for (issue 22, docs/security.md). They are
# checked before any memory or CPU is spent: by the estimator's parameter validation
# (MAX_ITER_LIMIT), by colide_core.data.simulate.check_spec (the one simulation protocol, hence the
# dashboard, the sweep executor and `python -m colide_core simulate`/`bench`) and by the CLI's
# bench loader (MAX_SWEEP_RUNS).
# --------------------------------------------------------------------------------------------

#: Most iterations of one stage (``max_iter`` entries). The paper uses at most 7e4; a huge budget
#: bounded by ``max_time`` (a solve "until the time is up") stays possible. Wall time is bounded
#: by ``max_time``, not by this.
MAX_ITER_LIMIT = 1_000_000_000
#: Most nodes of a simulated DAG (``n_nodes``). The paper's largest graphs have 500 nodes; a
#: (2000, 2000) float64 matrix is 32 MB.
MAX_NODES = 2_000
#: Most samples of a simulated dataset (``n_samples``).
MAX_SAMPLES = 1_000_000
#: Most cells ``n_samples * n_nodes`` of a simulated dataset: 50e6 float64 cells are 400 MB per
#: copy, and a simulation holds about four copies at its peak (noise, data, standardised copy).
#: The dashboard's largest simulation (200 nodes x 200,000 samples) is 40e6 cells.
MAX_CELLS = 50_000_000
#: Largest expected degree ``k`` of an ERk / SFk graph (about ``k * n_nodes`` edges; an ERk graph
#: with ``k >= (n_nodes - 1) / 2`` is already complete). Bounds the edges at
#: ``MAX_DEGREE * MAX_NODES`` = 200,000.
MAX_DEGREE = 100.0
#: Edge-weight magnitudes ``(low, high)`` of a simulation made by hand: the Simulate page's
#: starting value and the CLI's ``simulate --w-range`` default, for EV and NV alike (weights
#: uniform on ``[-high, -low] U [low, high]``). The paper's EV range; with ``|w| >= 0.5`` every true
#: edge lies above the 0.3 threshold. The paper's NV range (0.25, 1) stays the protocol's own
#: default (``colide_core.data.simulate.simulate_dataset`` with ``w_range=None``), which the
#: benchmarks use.
SIM_W_RANGE = (0.5, 2.0)
#: Most runs (methods x data settings x seeds) of one ``python -m colide_core bench`` sweep.
MAX_SWEEP_RUNS = 10_000
#: Most values of ``lambda1`` and of the threshold in one :func:`colide_core.solver.path.lambda_path`
#: (its stored graphs, ``n_lambdas * n_thresholds * n_nodes**2`` numbers, are also bounded by
#: ``MAX_CELLS``).
MAX_PATH_LAMBDAS = 100
MAX_PATH_THRESHOLDS = 100
#: Most fits of one bootstrap (``n_boot``) or stability selection (``n_subsamples * n_lambdas``).
MAX_RESAMPLES = 100_000
# --- bounds of the interactive (shared-server) run settings ----------------------------------
# The library accepts any value its parameter checks allow; the dashboard, where a setting may
# come from another person's manifest, also keeps every fit inside these bounds
# (colide_core.settings.INTERACTIVE), so no setting can start a fit that never ends.

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
#: Most resubmissions a sweep accepts for a task whose worker died (``bench --retries``).
MAX_RETRIES = 100
#: Ceiling on each of CoLiDE-TOPO's candidate-set sizes from the dashboard, a URL or a manifest
#: (``topo_sizes``; TOPO's own default is 1000): bounds the swaps evaluated between two checks.
MAX_TOPO_SIZE = 5_000
#: Most numbers one fit may keep with ``record_W=True`` (checkpoints x n_nodes**2): 25e6 float64
#: numbers are 200 MB. The default schedule with ``checkpoint=1000`` records at most 130 copies
#: of W, so a 200-node graph (5.2e6 numbers) fits.
MAX_RECORD_W_CELLS = 25_000_000

# --------------------------------------------------------------------------------------------
# The live Learn page (issue 25): where moving λ re-solves without a Run click.
# --------------------------------------------------------------------------------------------

#: λ values offered by the Learn page's log-scale slider: 1, 2 and 5 per decade from 0.001 to 2
#: (the useful part of :data:`LAMBDA1_RANGE`; the paper's 0.05 is on the grid). Sachs's edge
#: count goes from about 40 (λ = 0.001) to 0 (λ = 2) at the default threshold.
LAMBDA1_GRID = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
#: Largest graph the Learn page re-solves live (every widget change, no Run click). Measured on
#: the 2-core development machine with the fast solver: a fit takes 0.03-0.1 s on Sachs
#: (d = 11) and 0.27-0.5 s on a simulated ER2 graph with d = 50, n = 1000-2000 (EV and NV).
LIVE_MAX_NODES = 50
#: Largest dataset (``n_samples * n_nodes``) the Learn page re-solves live: forming the
#: covariance is the only step that grows with ``n``.
LIVE_MAX_CELLS = 2_000_000
#: Solvers fast enough for the live Learn page ("adam" is the paper's 130,000-step schedule); CoLiDE-TOPO
#: is live where its measured estimate allows (dashboard.fitting.live_reason, one rule for all).
LIVE_SOLVERS = ("auto", "fast")
#: Most iterations a live fit may be given (``sum(max_iter)``): the paper's schedule. A manifest
#: may allow up to MAX_ITER_TOTAL, which at d = 50 is seconds per fit: such a page needs Run.
LIVE_MAX_ITER_TOTAL = sum(MAX_ITER)

__all__ += ["LAMBDA1_GRID", "LIVE_MAX_NODES", "LIVE_MAX_CELLS", "LIVE_SOLVERS", "LIVE_MAX_ITER_TOTAL"]

#: Graph export formats: name -> (file extension, MIME type). Read by
#: :func:`colide_core.graph.export.export_graph` and by the CLI's options (so ``--help`` imports
#: no parser).
EXPORT_FORMATS = {
    "graphml": (".graphml", "application/xml"),
    "dot": (".dot", "text/vnd.graphviz"),
    "json": (".json", "application/json"),
    "dagitty": (".dagitty.txt", "text/plain"),
    "edges_csv": ("_edges.csv", "text/csv"),
    "adjacency_csv": ("_adjacency.csv", "text/csv"),
    "png": (".png", "image/png"),
    "svg": (".svg", "image/svg+xml"),
}
__all__ += ["EXPORT_FORMATS"]

# --------------------------------------------------------------------------------------------
# Several conditions and known intervention targets (issue 31, docs/conditions.md).
# --------------------------------------------------------------------------------------------

#: Fewest rows a condition may have: its own mean and covariance need two.
MIN_CONDITION_ROWS = 2
#: Most distinct conditions (labels) of one dataset. The statistics are ``K * n_nodes**2``
#: numbers, also bounded by :data:`MAX_CELLS`.
MAX_CONDITIONS = 1_000
#: Most distinct conditions of a dataset in the dashboard (an upload's condition column): every
#: fit, bootstrap worker and live rerun builds their statistics, so the shared server takes far
#: fewer than the library (issue 42; the cost of both limits is measured in docs/security.md).
#: Simulations and links stay below it (``INTERACTIVE_BOUNDS["n_conditions"]``, 50 + 1).
MAX_CONDITIONS_DASHBOARD = 100
#: Longest condition label, in characters (labels are shown and written to manifests).
MAX_CONDITION_LABEL = 200
#: Largest targets file the CLI reads (bytes): ``{label: [node, ...]}`` for 1,000 conditions.
MAX_TARGETS_FILE_BYTES = 1_000_000
#: How the conditions enter the model: an intercept per condition (the default) or one per node.
INTERCEPTS = ("condition", "pooled")
INTERCEPT = "condition"
__all__ += ["MIN_CONDITION_ROWS", "MAX_CONDITIONS", "MAX_CONDITIONS_DASHBOARD", "MAX_CONDITION_LABEL",
            "MAX_TARGETS_FILE_BYTES", "INTERCEPTS", "INTERCEPT"]

# Planning the next experiment (colide_core.evaluation.planning, docs/planning.md).
#: What rank_interventions' score counts, the default first (read by the CLI's options too, so
#: ``--help`` imports no solver). "entropy" first: under the default solver it picked better than
#: "oriented" at d = 10 and 20 on both sets of simulated graphs (90 a size; docs/planning.md,
#: "Which criterion by default").
PLAN_CRITERIA = ("entropy", "oriented", "mec")
#: Bootstrap refits of rank_interventions and ``colide plan`` by default.
PLAN_BOOTSTRAP = 20
#: The largest Meek phase rank_interventions accepts: undirected edges of the point estimate x
#: candidates x graphs (planning.planning_work). Its cost per unit is measured in docs/planning.md.
PLAN_MAX_WORK = 2_000_000
__all__ += ["PLAN_CRITERIA", "PLAN_BOOTSTRAP", "PLAN_MAX_WORK"]

#: ``weights`` of :func:`colide_core.evaluation.interventions.predict_intervention`, the default first:
#: by the fit's variant (the fit's own on NV, least squares otherwise: docs/predict.md, issue 52), least
#: squares on the learned parents, or the fit's own (L1-shrunk) weights.
PREDICT_WEIGHTS = ("auto", "refit", "fit")
__all__ += ["PREDICT_WEIGHTS"]
