"""What each heavy dashboard job costs in memory, reckoned before it starts (issue 53).

One :class:`JobMemory` per kind of job, from its sizes: the Edge confidence bootstrap and stability
selection, Predict's ranking of the experiments and its intervals, the Check page's checks and
λ path. Each function's constants were measured with tracemalloc by ``tests/test_job_memory.py``
(the figures are beside each constant). :mod:`dashboard.infra.memory` reserves them in the server's
budget (``reserve_job``) and re-exports them; this module holds no state and imports nothing of
the dashboard.
"""
from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["JobMemory", "bootstrap_memory", "ranking_memory", "stability_memory", "intervals_memory", "checks_memory", "path_memory", "BOOTSTRAP_WORKING_FACTOR", "BOOTSTRAP_PER_RESAMPLE", "RANKING_WORKING_FACTOR", "RANKING_PER_CANDIDATE", "STABILITY_WORKING_FACTOR", "INTERVALS_DATA_COPIES", "INTERVALS_REFIT_COPIES", "INTERVALS_GRAPH_ARRAYS", "INTERVALS_PER_RESAMPLE", "CHECKS_DATA_COPIES", "CHECKS_BYTES_PER_TEST", "CHECKS_BYTES_PER_RANDOM_TEST", "PATH_DATA_COPIES"]


#: Peak bytes of a bootstrap while it runs, as a multiple of its adjacency samples
#: (``n_boot x d x d`` float64): every resample's graph in the executor's rows and their stack (the
#: result's ``adjacency_samples``), summarised a block of edges at a time (measured by
#: ``tests/test_job_memory.py`` with tracemalloc: 2.14-2.23 times at d = 40-200, 3.2-3.3 times
#: before the summary worked by blocks; :func:`bootstrap_memory` adds the row indices and each
#: resample's own objects, which dominate at small d).
BOOTSTRAP_WORKING_FACTOR = 2.5
#: Bytes each resample holds while a bootstrap runs besides its graph and its row indices (its task,
#: its key, its executor row, its sigmas' array): measured 1.3-1.5 KB with tracemalloc at d = 2.
BOOTSTRAP_PER_RESAMPLE = 2048
#: Peak bytes of Predict's ranking of the experiments after its bootstrap, as a multiple of the
#: bootstrap's samples: the bootstrap's result while each graph's edges are read from it as
#: booleans (an eighth of it), then the booleans alone: the result is given back before the
#: candidates are scored, and each edge's share of the graphs is counted one graph at a time
#: (:func:`colide_core.evaluation.planning.rank_interventions`). Measured by
#: ``tests/test_job_memory.py`` with tracemalloc: 1.16-1.21 times the samples when the bootstrap
#: returns, 1.29-1.41 with the fixed parts at d = 40-100; the ranking's whole peak is now its
#: bootstrap's (2.16-2.55 times the samples at d = 40-120), where it was 2.7-5.2 times while the
#: result, the booleans, their stack and its float64 copy were all held at once.
RANKING_WORKING_FACTOR = 1.25
#: Bytes per candidate per d x d edge the ranking holds after its bootstrap besides its counts
#: (whose bytes are the smallest unsigned integer that holds the resamples: 1 up to 255): the
#: point estimate's and one graph's settled masks (the previous graph's are given back first) and
#: the Meek closures' temporaries. Measured with the 1-byte counts by the same test: 3.2-3.3 bytes
#: in all at d = 100-150 (12-13 when the counts were float64 and two graphs' masks were held).
RANKING_PER_CANDIDATE = 3
#: Peak bytes of a stability selection while it runs, as a multiple of all its fits' graphs
#: (``n_subsamples x n_lambdas x d x d`` float64, held by the executor until they are counted;
#: measured 1.08-1.17 times by the same test). Its result keeps only ``n_lambdas + 2`` d x d arrays.
STABILITY_WORKING_FACTOR = 1.35


@dataclasses.dataclass(frozen=True)
class JobMemory:
    """What a job will cost in memory, reckoned before it starts (:func:`dashboard.infra.memory.reserve_job`).

    Attributes
    ----------
    what : str
        How a sentence names the job ("This bootstrap"); plain text, no user input.
    keep : int
        Bytes of the result the session keeps once the job ends (an estimate; the result's own
        bytes, :func:`dashboard.infra.memory.result_nbytes`, replace it when it ends).
    peak : int
        Bytes the job holds at most while it runs (at least ``keep``).
    detail : str
        How ``keep`` is reckoned, e.g. "1,000 resamples × 200 × 200 edge weights of 8 bytes".
    per_unit : int
        Bytes of ``peak`` that each unit of ``units`` costs (a resample), for the sentence's
        advice; 0: no advice by units.
    units : int
        Units asked for (resamples).
    unit_word : str
        The unit's plural ("resamples").
    keys : tuple of str
        Session-state keys that keep the result (deleted with a session closed for
        :data:`dashboard.infra.memory.CLOSED_GRACE_S`, as its dataset is).
    phases : tuple of (int, int)
        For a job whose phases peak apart (the ranking: its bootstrap, then its candidates'
        counts), each phase's ``(bytes per unit, fixed bytes)``: ``peak`` is the largest phase at
        ``units``, and the sentence's advice is the most units that keep every phase within the
        room. Empty (the default): one phase, ``(per_unit, peak - per_unit * units)``.
    """

    what: str
    keep: int
    peak: int
    detail: str = ""
    per_unit: int = 0
    units: int = 0
    unit_word: str = "units"
    keys: tuple = ()
    phases: tuple = ()


def bootstrap_memory(n_boot: int, n_samples: int, n_nodes: int, keys=()) -> JobMemory:
    """What :func:`colide_core.evaluation.stability.bootstrap_edges` will cost, before it starts.

    Its result keeps every resample's weighted graph (``adjacency_samples``, ``n_boot x d x d``
    float64) and three d x d summaries; while it runs it holds :data:`BOOTSTRAP_WORKING_FACTOR`
    times the samples, every resample's row indices (``n_samples`` int64 each, drawn before the
    fits; half again while they are sent to worker processes), :data:`BOOTSTRAP_PER_RESAMPLE`
    bytes per resample and two copies of ``X`` (the sweep's content id and a resample's frame).

    Parameters
    ----------
    n_boot : int
        Resamples asked for.
    n_samples, n_nodes : int
        ``X``'s shape (n_samples, n_nodes).
    keys : tuple of str, default ()
        The session-state keys that will keep the result.

    Returns
    -------
    JobMemory
    """
    n_boot, n, d = int(n_boot), int(n_samples), int(n_nodes)
    samples = 8 * n_boot * d * d
    # per resample: its graph's share of the peak, its sigmas, its row indices (1.5 x), its objects
    per_unit = int(BOOTSTRAP_WORKING_FACTOR * 8 * d * d) + 8 * d + 12 * n + BOOTSTRAP_PER_RESAMPLE
    fixed = 3 * 8 * d * d + 2 * 8 * n * d  # the summaries, X's copies
    return JobMemory("This bootstrap", keep=samples + 3 * 8 * d * d + 8 * n_boot * d,
                     peak=per_unit * n_boot + fixed,
                     detail=f"{n_boot:,} resamples × {d} × {d} edge weights of 8 bytes",
                     per_unit=per_unit, units=n_boot, unit_word="resamples", keys=tuple(keys))


def ranking_memory(n_boot: int, n_samples: int, n_nodes: int, n_candidates: int | None = None,
                   keys=()) -> JobMemory:
    """What :func:`colide_core.evaluation.planning.rank_interventions` will cost, before it starts.

    Two phases, whose peaks do not add up: its bootstrap (:func:`bootstrap_memory`'s peak), then,
    with only each graph's edges kept from the bootstrap's result, the candidates' scoring:
    :data:`RANKING_WORKING_FACTOR` times the samples (the result while its edges are read), each
    resample's sigmas and objects (:data:`BOOTSTRAP_PER_RESAMPLE`), per candidate per d x d edge
    its count (the smallest unsigned integer that holds ``n_boot``) and
    :data:`RANKING_PER_CANDIDATE` bytes, the three summaries and two copies of ``X``. The peak
    reserved is the larger phase; each is linear in the resamples (:attr:`JobMemory.phases`).
    Its result is a table of one row per candidate and the point estimate's weights as nested lists.

    Parameters
    ----------
    n_boot : int
        Resamples asked for.
    n_samples, n_nodes : int
        ``X``'s shape (n_samples, n_nodes).
    n_candidates : int, optional
        The nodes ranked; default every node.
    keys : tuple of str, default ()
        The session-state keys that will keep the result.

    Returns
    -------
    JobMemory
        ``per_unit`` is the bootstrap's (the steeper phase).
    """
    boot = bootstrap_memory(n_boot, n_samples, n_nodes)
    n_boot, n, d = int(n_boot), int(n_samples), int(n_nodes)
    n_cand = d if n_candidates is None else int(n_candidates)
    count_bytes = np.min_scalar_type(max(n_boot, 1)).itemsize
    boot_phase = (boot.per_unit, boot.peak - boot.per_unit * n_boot)
    after_phase = (int(RANKING_WORKING_FACTOR * 8 * d * d) + 8 * d + BOOTSTRAP_PER_RESAMPLE,
                   (RANKING_PER_CANDIDATE + count_bytes) * n_cand * d * d + 3 * 8 * d * d + 2 * 8 * n * d)
    return JobMemory("This ranking", keep=32 * d * d + 1024 * n_cand,
                     peak=max(per * n_boot + fixed for per, fixed in (boot_phase, after_phase)),
                     detail=f"its table of {n_cand:,} candidates; while it runs {n_boot:,} resamples × {d} × {d} "
                            f"edge weights of 8 bytes and {n_cand:,} candidates' {d} × {d} counts",
                     per_unit=boot.per_unit, units=n_boot, unit_word="resamples", keys=tuple(keys),
                     phases=(boot_phase, after_phase))


def stability_memory(n_subsamples: int, n_lambdas: int, n_samples: int, n_nodes: int, keys=()) -> JobMemory:
    """What :func:`colide_core.evaluation.stability.stability_selection` will cost, before it starts.

    Its result keeps ``n_lambdas + 2`` d x d arrays (the selection probabilities, their maximum,
    the stable set); while it runs the executor holds every fit's graph until they are counted:
    :data:`STABILITY_WORKING_FACTOR` times ``n_subsamples x n_lambdas x d x d`` float64, plus two
    copies of ``X``.

    Parameters
    ----------
    n_subsamples, n_lambdas : int
        Half-samples and λ values asked for.
    n_samples, n_nodes : int
        ``X``'s shape (n_samples, n_nodes).
    keys : tuple of str, default ()
        The session-state keys that will keep the result.

    Returns
    -------
    JobMemory
    """
    n_sub, n_lam, n, d = int(n_subsamples), int(n_lambdas), int(n_samples), int(n_nodes)
    keep = (n_lam + 2) * 8 * d * d
    graphs = 8 * n_sub * n_lam * d * d
    return JobMemory("This stability selection", keep=keep,
                     peak=int(STABILITY_WORKING_FACTOR * graphs) + 2 * keep + 2 * 8 * n * d,
                     detail=f"{n_lam} λ × {d} × {d} selection probabilities of 8 bytes; while it runs "
                            f"{n_sub * n_lam:,} fits' {d} × {d} graphs",
                     per_unit=int(STABILITY_WORKING_FACTOR * 8 * n_lam * d * d), units=n_sub,
                     unit_word="half-samples", keys=tuple(keys))


#: Copies of ``X`` (``n_samples x n_nodes`` float64) Predict's intervals hold at most at once while
#: they run (:func:`colide_core.evaluation.interventions.bootstrap_shifts`): the checked data, a
#: resample's rows for its refit and their frame, the fit's own view of them. Measured by
#: ``tests/test_job_memory.py`` with tracemalloc (all it holds but the row indices, over ``X``'s
#: bytes, with a stand-in fit): 4.2-4.3 at d = 20-100 with the fit's own weights, 7.7-7.9 with
#: least squares (:data:`INTERVALS_REFIT_COPIES`); more at d = 150, n = 300, where the d x d
#: arrays weigh as much as ``X``.
INTERVALS_DATA_COPIES = 5
#: More copies of ``X`` the intervals hold with least-squares weights (each refit's rows again).
INTERVALS_REFIT_COPIES = 4
#: d x d float64 arrays one refit of the intervals holds at once (its weights, the plug-in's total
#: effects and their temporaries; measured 2-8 with a stand-in fit).
INTERVALS_GRAPH_ARRAYS = 10
#: Bytes each resample of the intervals holds besides its row indices and its shift: its arrays'
#: and list's objects (measured about 1.1 KB at Sachs' shape).
INTERVALS_PER_RESAMPLE = 1536


def intervals_memory(n_boot: int, n_samples: int, n_nodes: int, refit: bool = True, keys=()) -> JobMemory:
    """What :func:`colide_core.evaluation.interventions.bootstrap_shifts` will cost, before it starts.

    Its resamples' row indices are drawn before the first refit (``n_samples`` int64 each, held
    to the end), each finished refit keeps its predicted shift (``n_nodes`` float64, twice when
    they are stacked at the end), and one refit at a time holds
    :data:`INTERVALS_DATA_COPIES` copies of ``X`` (:data:`INTERVALS_REFIT_COPIES` more with
    least-squares weights) and :data:`INTERVALS_GRAPH_ARRAYS` d x d arrays. The solver's own
    working memory inside a fit is not counted (as for every job here). Its result is the
    ``n_boot x n_nodes`` shifts.

    Parameters
    ----------
    n_boot : int
        Resamples asked for.
    n_samples, n_nodes : int
        ``X``'s shape (n_samples, n_nodes).
    refit : bool, default True
        Whether each refit's weights are least squares (``weights="refit"``); False: the fit's own.
    keys : tuple of str, default ()
        The session-state keys that will keep the result.

    Returns
    -------
    JobMemory
    """
    n_boot, n, d = int(n_boot), int(n_samples), int(n_nodes)
    per_unit = 8 * n + 2 * 8 * d + INTERVALS_PER_RESAMPLE
    copies = INTERVALS_DATA_COPIES + (INTERVALS_REFIT_COPIES if refit else 0)
    fixed = copies * 8 * n * d + INTERVALS_GRAPH_ARRAYS * 8 * d * d
    return JobMemory("This bootstrap of the prediction", keep=8 * n_boot * d, peak=per_unit * n_boot + fixed,
                     detail=f"{n_boot:,} refits' shifts of {d} nodes of 8 bytes; while it runs {n_boot:,} "
                            f"resamples' row indices of {n:,} rows and {copies} copies of the data",
                     per_unit=per_unit, units=n_boot, unit_word="resamples", keys=tuple(keys))


#: Copies of ``X`` the Check page's checks hold at most at once
#: (:func:`colide_core.evaluation.checks.run_checks`: the frame, the residuals' regressions, the
#: Markov check's centred data and its test object's copy, the evidence's Gram matrix inputs).
#: Measured by ``tests/test_job_memory.py`` with tracemalloc: 9.3 copies from n = 1,000 to
#: 4,000 rows at d = 50 (the refits' own data, one copy at a time, never exceeded it).
CHECKS_DATA_COPIES = 10
#: Bytes per conditional-independence test of the learned graph (at most
#: ``colide_core.evaluation.markov.MAX_TESTS``): its statement, p-value and row of the report's
#: table (measured 320-950 with the other d x d arrays, 280-320 of them kept in the report).
CHECKS_BYTES_PER_TEST = 512
#: Bytes per test of each random DAG of the Markov check: the p-value cache of the test object
#: grows with every new statement (measured 88-103, dict resizes included in the margin).
CHECKS_BYTES_PER_RANDOM_TEST = 160
#: Copies of ``X`` the λ path holds besides its arrays (the data, its centred copy, a fit's
#: working copy); the solver's own memory is not counted.
PATH_DATA_COPIES = 4


def _n_tests(d: int) -> int:
    """The most conditional-independence tests the Markov check runs on one graph of ``d`` nodes."""
    from colide_core.evaluation.markov import MAX_TESTS

    return int(min(d * (d - 1) // 2, MAX_TESTS))


def checks_memory(n_samples: int, n_nodes: int, n_random: int, keys=()) -> JobMemory:
    """What :func:`colide_core.evaluation.checks.run_checks` will cost, before it starts.

    While it runs: :data:`CHECKS_DATA_COPIES` copies of ``X``, :data:`CHECKS_BYTES_PER_TEST` bytes
    per test of the learned graph and :data:`CHECKS_BYTES_PER_RANDOM_TEST` per test of each random
    DAG (at most ``d (d - 1) / 2`` tests a graph, and ``MAX_TESTS``), and sixteen d x d float64
    arrays. The refits (standardised, rescaled) hold one copy of ``X`` at a time within that; the
    solver's own memory is not counted. Its report keeps three copies of ``X`` (the residuals and
    their tables), the learned graph's tests and sixteen d x d arrays (measured 0.75-0.97 of that).

    Parameters
    ----------
    n_samples, n_nodes : int
        ``X``'s shape (n_samples, n_nodes).
    n_random : int
        Random DAGs of the Markov check.
    keys : tuple of str, default ()
        The session-state keys that will keep the result.

    Returns
    -------
    JobMemory
    """
    n, d, n_random = int(n_samples), int(n_nodes), int(n_random)
    tests = _n_tests(d)
    per_unit = CHECKS_BYTES_PER_RANDOM_TEST * tests
    keep = 3 * 8 * n * d + 320 * tests + 16 * 8 * d * d
    fixed = CHECKS_DATA_COPIES * 8 * n * d + CHECKS_BYTES_PER_TEST * tests + 16 * 8 * d * d
    return JobMemory("These checks", keep=keep, peak=per_unit * n_random + fixed,
                     detail=f"their report on {n:,} rows × {d} nodes and {tests:,} tests; while they run "
                            f"{CHECKS_DATA_COPIES} copies of the data and up to {tests:,} tests on each of "
                            f"{n_random:,} random DAGs",
                     per_unit=per_unit, units=n_random, unit_word="random DAGs", keys=tuple(keys))


def path_memory(n_samples: int, n_nodes: int, n_lambdas: int = 9, n_thresholds: int = 7, keys=()) -> JobMemory:
    """What :func:`colide_core.solver.path.lambda_path` will cost, before it starts.

    Its result keeps every λ's weights and every (λ, threshold)'s DAG as float64
    (``n_lambdas x (1 + n_thresholds)`` d x d arrays); while it runs it also holds the weights'
    list before they are stacked, the DAGs' edge test (one byte per entry) and
    :data:`PATH_DATA_COPIES` copies of ``X``. Measured by ``tests/test_job_memory.py`` with
    tracemalloc: 92.6-94.4 d x d arrays' bytes at the default 9 λ and 7 thresholds (d = 100-150,
    X included), 72-74 of them kept. The solver's own memory is not counted.

    Parameters
    ----------
    n_samples, n_nodes : int
        ``X``'s shape (n_samples, n_nodes).
    n_lambdas, n_thresholds : int, default 9 and 7
        The grid (the Check page's: ``default_lambdas()`` and ``DEFAULT_THRESHOLDS``).
    keys : tuple of str, default ()
        The session-state keys that will keep the result.

    Returns
    -------
    JobMemory
    """
    n, d, n_l, n_t = int(n_samples), int(n_nodes), int(n_lambdas), int(n_thresholds)
    dd = 8 * d * d
    keep = dd * n_l * (1 + n_t) + 8 * n_l * (2 * n_t + d + 8)
    peak = keep + dd * (n_l + 4) + n_l * n_t * d * d + PATH_DATA_COPIES * 8 * n * d
    return JobMemory("This λ path", keep=keep, peak=peak,
                     detail=f"{n_l} λ × {n_t} thresholds × {d} × {d} graphs of 8 bytes",
                     keys=tuple(keys))
