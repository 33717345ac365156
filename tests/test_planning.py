"""Plan the next experiment (issue 40, section 2): interventional essential graphs and the ranking
of single-node interventions (colide_core.evaluation.planning).

Convention: B[i, j] != 0 means i -> j; X is (n_samples, n_nodes). Essential graphs use gadjid's
coding: 1 at [i, j] only for i -> j, 2 at [i, j] and [j, i] for i -- j.
"""
import numpy as np
import pandas as pd
import pytest

from colide_core import CoLiDE
from colide_core._params import InvalidParameterError
from colide_core.data.simulate import simulate_dag, simulate_linear_sem
from colide_core.evaluation._metrics import cpdag_from_dag
from colide_core.evaluation import planning
from colide_core.evaluation.planning import interventional_essential_graph as ieg, planning_work, rank_interventions

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

UNDIRECTED, DIRECTED = 2, 1


def _edges(E):
    """{(i, j): 'directed'} for i -> j and {(i, j): 'undirected'} for i -- j with i < j."""
    out = {}
    for i, j in zip(*np.nonzero(E)):
        if E[i, j] == DIRECTED:
            out[(int(i), int(j))] = "directed"
        elif i < j:
            out[(int(i), int(j))] = "undirected"
    return out


# --- the I-essential graph on hand-worked graphs -------------------------------------------------

CHAIN = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])  # a=0 -> b=1 -> c=2


def test_chain_observational_is_all_undirected():
    # a -> b -> c has no v-structure: a <- b <- c and a <- b -> c are Markov equivalent.
    assert _edges(ieg(CHAIN)) == {(0, 1): "undirected", (1, 2): "undirected"}


def test_chain_target_middle_orients_both_edges():
    # {b} holds exactly one end of a -- b and of b -- c: both directed as in the DAG.
    assert _edges(ieg(CHAIN, [[1]])) == {(0, 1): "directed", (1, 2): "directed"}


def test_chain_target_source_orients_one_and_meek_r1_the_other():
    # {a} orients a -> b only; then a -> b -- c with a, c non-adjacent: R1 gives b -> c.
    assert _edges(ieg(CHAIN, [[0]])) == {(0, 1): "directed", (1, 2): "directed"}


def test_chain_target_sink_leaves_the_first_edge_open():
    # {c} orients b -> c; nothing points into a or b, so a -- b stays open.
    assert _edges(ieg(CHAIN, [[2]])) == {(0, 1): "undirected", (1, 2): "directed"}


def test_chain_targets_by_name():
    assert (ieg(CHAIN, [["c"]], node_names=["a", "b", "c"]) == ieg(CHAIN, [[2]])).all()


def test_collider_is_oriented_without_interventions():
    # a -> c <- b, a and b non-adjacent: a v-structure, compelled in every DAG of the class.
    B = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])
    assert _edges(ieg(B)) == {(0, 2): "directed", (1, 2): "directed"}


def test_collider_orients_its_descendants_by_r1():
    # a -> c <- b, c -> d: the v-structure is compelled, then R1 (a -> c -- d, a, d non-adjacent).
    B = np.zeros((4, 4), int)
    B[0, 2] = B[1, 2] = B[2, 3] = 1
    assert set(_edges(ieg(B)).values()) == {"directed"}


def test_triangle_needs_a_target_and_r2():
    # a -> b -> c, a -> c: a complete graph on 3 nodes, every edge reversible. Target {a}: a -> b
    # and a -> c directed (one end in {a}); b -- c stays open (both ends outside, no rule fires:
    # a -> b -- c has a, c adjacent, so no R1). Target {b}: a -> b, b -> c; then R2
    # (a -> b -> c, a -- c) gives a -> c.
    B = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    assert set(_edges(ieg(B)).values()) == {"undirected"}
    assert _edges(ieg(B, [[0]])) == {(0, 1): "directed", (0, 2): "directed", (1, 2): "undirected"}
    assert set(_edges(ieg(B, [[1]])).values()) == {"directed"}


def test_empty_family_is_the_cpdag_on_random_dags():
    for seed in range(40):
        d = 3 + seed % 9
        B = simulate_dag(d, 0.5 + (seed % 5) * 0.5, "er", random_state=seed)
        assert (ieg(B) == cpdag_from_dag(B)).all(), seed
        assert (ieg(B, [[]]) == cpdag_from_dag(B)).all(), seed


def test_matches_gies_protected_edges_on_random_dags_and_families():
    # gies.utils.replace_unprotected is Hauser and Buehlmann's (2012) Algorithm 1: undirect every
    # edge that is not strongly I-protected until none is left. It codes i -- j as both directions.
    from gies.utils import replace_unprotected

    rng = np.random.default_rng(0)
    for seed in range(60):
        d = int(rng.integers(3, 11))
        B = simulate_dag(d, float(rng.uniform(0.5, 2.5)), "er", random_state=seed).astype(int)
        family = [sorted(int(v) for v in rng.choice(d, int(rng.integers(1, 3)), replace=False))
                  for _ in range(int(rng.integers(0, 3)))]
        theirs = replace_unprotected(B, [[]] + family)
        assert ((ieg(B, family) != 0).astype(int) == theirs).all(), (seed, family)


def test_essential_graph_refuses_cycles_and_bad_families():
    with pytest.raises(ValueError, match="cycle"):
        ieg(np.array([[0, 1], [1, 0]]))
    with pytest.raises(InvalidParameterError, match="node index 3 is out of range"):  # the one lookup
        ieg(CHAIN, [[3]])
    with pytest.raises(InvalidParameterError, match="sequence"):
        ieg(CHAIN, "abc")


# --- ranking on data ---------------------------------------------------------------------------

def _fork(n=3000, seed=0):
    """z -> x, z -> y, z -> w with weights 1 and unit noise (EV: identifiable, so fits find it)."""
    W = np.zeros((4, 4))
    W[0, 1:] = 1.0
    X, _ = simulate_linear_sem(W, n, "gaussian", noise_var=np.ones(4), random_state=seed)
    return pd.DataFrame(X, columns=["z", "x", "y", "w"])


def test_fork_best_target_is_its_centre():
    # The fork z -> {x, y, w} has no v-structure: its class leaves all 3 edges open. Intervening
    # on z holds one end of each: 3 settled. On a leaf, say x: z -> x only; nothing points into z,
    # so z -- y and z -- w stay open: 1 settled. Every refit of these data finds the fork, so the
    # "oriented" and "mec" criteria agree (every edge at the target is open).
    X = _fork()
    ranking = rank_interventions(X, variant="ev", n_bootstrap=4, random_state=0, criterion="oriented")
    assert list(ranking.index)[0] == "z"
    assert ranking.loc["z", "score"] == 3.0 and ranking.loc["z", "point_estimate"] == 3
    assert ranking.loc[["x", "y", "w"], "score"].tolist() == [1.0, 1.0, 1.0]
    assert set(ranking.loc["z", "edge_pairs"]) == {("z", "x"), ("z", "y"), ("z", "w")}
    assert ranking.loc["x", "edges"] == "z\u2014x"
    assert ranking.loc["z", "edge_probability"] == {"z\u2014x": 1.0, "z\u2014y": 1.0, "z\u2014w": 1.0}
    assert (ranking["undirected"] == 3.0).all()
    assert ranking.attrs["n_graphs"] == 4 and not ranking.attrs["stopped"]
    mec = rank_interventions(X, variant="ev", n_bootstrap=4, random_state=0, criterion="mec")
    assert mec["score"].to_dict() == ranking["score"].to_dict()


def test_oriented_counts_compelled_edges_at_the_target_mec_does_not():
    # The collider a -> c <- b (weights 1, unit noise, EV) is compelled: nothing is open, so "mec"
    # scores 0 everywhere. "oriented" counts the edges an experiment on t orients by itself: c has
    # both (2), a and b one each (1).
    W = np.zeros((3, 3))
    W[0, 2] = W[1, 2] = 1.0
    X = pd.DataFrame(simulate_linear_sem(W, 3000, "gaussian", noise_var=np.ones(3), random_state=4)[0],
                     columns=list("abc"))
    oriented = rank_interventions(X, variant="ev", n_bootstrap=2, random_state=0, criterion="oriented")
    assert oriented["score"].to_dict() == {"c": 2.0, "a": 1.0, "b": 1.0}
    mec = rank_interventions(X, variant="ev", n_bootstrap=2, random_state=0, criterion="mec")
    assert (mec["score"] == 0).all() and (mec["undirected"] == 0).all()


def test_chain_from_data_scores_by_hand():
    # a -> b -> c -> d: a settles a -- b, then R1 down the chain: 3. b: a -- b and b -- c, then R1
    # c -> d: 3. c: b -- c and c -- d; a -- b stays open: 2. d: c -- d only: 1. (Every edge is open
    # in the class, so "oriented" = "mec".)
    W = np.zeros((4, 4))
    W[0, 1] = W[1, 2] = W[2, 3] = 1.0
    X, _ = simulate_linear_sem(W, 3000, "gaussian", noise_var=np.ones(4), random_state=1)
    ranking = rank_interventions(pd.DataFrame(X, columns=list("abcd")), variant="ev", n_bootstrap=3,
                                 random_state=0, criterion="oriented")
    assert ranking["score"].to_dict() == {"a": 3.0, "b": 3.0, "c": 2.0, "d": 1.0}
    assert list(ranking.index) == ["a", "b", "c", "d"]  # ties keep the column order


def test_targets_already_run_leave_nothing_to_settle():
    # An experiment on z already ran: the family {{}, {z}} orients all three edges of the fork, so
    # no further single target settles anything, and 0 edges are open.
    obs = _fork(2000, seed=2)
    W = np.zeros((4, 4))
    W[0, 1:] = 1.0
    W_do = W.copy()
    W_do[:, 0] = 0.0
    iv, _ = simulate_linear_sem(W_do, 1000, "gaussian", noise_var=np.ones(4), random_state=3)
    X = pd.concat([obs, pd.DataFrame(iv, columns=obs.columns)], ignore_index=True)
    conditions = ["obs"] * 2000 + ["do z"] * 1000
    ranking = rank_interventions(X, variant="ev", conditions=conditions, targets={"do z": ["z"]},
                                 n_bootstrap=2, random_state=0)
    assert (ranking["score"] == 0).all() and (ranking["undirected"] == 0).all()
    assert ranking.attrs["family"] == [["z"]] and planning.settles_nothing(ranking)


def test_topo_estimator_and_candidates():
    ranking = rank_interventions(_fork(), estimator=CoLiDE("ev", solver="topo"), candidates=["x", "z"],
                                 n_bootstrap=2, random_state=0, criterion="oriented")
    assert list(ranking.index) == ["z", "x"]
    assert ranking["score"].tolist() == [3.0, 1.0]


def test_point_estimate_alone_and_stop():
    X = _fork()
    alone = rank_interventions(X, variant="ev", n_bootstrap=0, criterion="oriented")
    assert alone.attrs["n_graphs"] == 0 and alone.loc["z", "score"] == 3.0
    calls = []

    def stop(done, total):
        calls.append((done, total))
        return True

    stopped = rank_interventions(X, variant="ev", n_bootstrap=5, random_state=0, callback=stop,
                                 criterion="oriented")
    # issue 53: the point fit asks first (done 0 of 2 x 5: five refits, five graphs to score), and
    # a Stop there ends the job: no refit runs, the point estimate alone is ranked
    assert calls == [(0, 10)] and stopped.attrs["stopped"] and stopped.attrs["n_graphs"] == 0
    # ranked on the point fit as far as it went: the score is its count, candidate by candidate
    assert (stopped["score"] == stopped["point_estimate"]).all()


def test_the_meek_phase_asks_after_every_candidate_of_every_graph_and_stops_there():
    # issue 53, high 1: the phase after the bootstrap asked nothing. Now: 2 refits (done 1, 2),
    # then per graph b and candidate k of 4, done = 2 + b + k / 4; total 2 x 2 throughout.
    X = _fork()
    calls = []
    rank_interventions(X, variant="ev", n_bootstrap=2, random_state=0,
                       callback=lambda done, total: calls.append((done, total)) and False)
    meek = [c for c in calls if c[0] > 2]
    assert [c for c in calls if c[0] in (1, 2)][:2] == [(1, 4), (2, 4)]
    assert meek == [(2 + b + k / 4, 4) for b in range(2) for k in range(1, 5)]
    seen = []

    def stop_in_meek(done, total):
        seen.append(done)
        return done > 2      # Stop at the first candidate scored
    stopped = rank_interventions(X, variant="ev", n_bootstrap=2, random_state=0, callback=stop_in_meek,
                                 criterion="oriented")
    assert seen[-1] == 2.25 and stopped.attrs["stopped"] and stopped.attrs["n_graphs"] == 0
    assert stopped.loc["z", "score"] == 3.0       # the point estimate's count: z -> x, y, w


def test_planning_work_counts_undirected_edges_candidates_and_graphs():
    # The chain a -> b -> c: both edges undirected in its CPDAG; 3 candidates, 5 graphs: 2 x 3 x 5.
    assert planning_work(CHAIN, n_graphs=5) == 30
    # {a} already run: a -> b directed, R1 then b -> c: nothing open, nothing to recheck
    assert planning_work(CHAIN, [[0]], n_graphs=5) == 0
    assert planning_work(CHAIN, candidates=[1], n_graphs=2) == 4


def test_a_ranking_beyond_the_bound_is_refused_before_the_bootstrap_with_the_reason():
    X = _fork()
    calls = []
    with pytest.raises(ValueError, match=r"too large to run: the fit leaves 3 edges undirected.*3 edges undirected|"
                                         r"too large to run: the fit leaves 3 edges undirected, and 4 candidates "
                                         r"x 20 graphs would recheck up to 240 edge closures \(the limit is 100\)"):
        rank_interventions(X, variant="ev", n_bootstrap=20, random_state=0, max_work=100,
                           callback=lambda done, total: calls.append(done) and False)
    assert all(done == 0 for done in calls)       # only the point fit ran: no refit
    with pytest.raises(InvalidParameterError, match="max_work"):
        rank_interventions(X, n_bootstrap=0, max_work=-1)


@pytest.mark.parametrize("seed", range(6))
def test_each_candidates_incremental_closure_is_the_closure_from_scratch(seed):
    # _settled closes the graph under the family once, then each candidate from there; Meek's
    # closure is a least fixed point, so it must equal the I-essential graph under family + {t}
    # built from scratch, on sparse and dense random DAGs (the dense ones take the matrix pass).
    rng = np.random.default_rng(seed)
    d = 40
    A = simulate_dag(d, 2.0 if seed % 2 else 12.0, random_state=seed) != 0
    family = [frozenset(rng.choice(d, 2, replace=False).tolist())] if seed % 3 == 0 else []
    M = planning._family_mask(d, [frozenset()] + family)
    before = ieg(A, family) == UNDIRECTED
    settled = planning._settled(A, M, range(d), strict=True)
    for t in range(d):
        after = ieg(A, family + [[t]]) == UNDIRECTED
        assert (settled[t] == np.triu(before & ~after)).all()


def test_the_closure_checks_only_edges_near_what_changed():
    # A chain 0 -> ... -> 59, all 59 edges undirected. Intervening on node 30 orients 29 -> 30 and
    # 30 -> 31; R1 then walks 31 -> 32 -> ... one edge per pass (nothing points into 29, so the
    # first 29 edges stay open): each pass rechecks only the few undirected edges next to the one
    # it oriented, so a candidate costs O(d) rule checks, not O(d) per pass
    # over every edge (about d^2 / 2 = 1,800 for the closure from scratch).
    d = 60
    A = np.eye(d, k=1, dtype=bool)
    M = planning._family_mask(d, [frozenset()])
    count = {"n": 0}
    forced = planning._forced

    def counting(*args):
        count["n"] += 1
        return forced(*args)
    import unittest.mock
    with unittest.mock.patch.object(planning, "_forced", counting):
        count["n"] = 0
        settled = planning._settled(A, M, [30])
        first = count["n"]
    assert settled[30].sum() == 1 + 29       # 29 -> 30, then 30 -> 31 ... 58 -> 59
    # the closure under M alone: 59 checks, nothing orients; then node 30: at most 3 edges per
    # pass near the two walking ends, both directions tried: <= 59 + 2 x 3 x 30 rule checks
    assert first <= 59 + 2 * 3 * 30


def test_entropy_baseline_is_zero_when_every_refit_agrees():
    # Every refit of the fork orients z -> x, y, w: no direction wavers, entropy 0 everywhere.
    ranking = rank_interventions(_fork(), variant="ev", n_bootstrap=3, random_state=0, criterion="entropy")
    assert (ranking["score"] == 0).all()
    # ... yet an experiment on z would settle 3 edges: the page must not say that none settles any
    # (planning.settles_nothing), and the order falls back on the fit's count (z first)
    assert not planning.settles_nothing(ranking) and list(ranking.index)[0] == "z"


class _Wavering:
    """A stand-in learner for a--b--c whose refits waver on both directions: each edge's
    direction is a bit of a hash of the rows it is fitted on (so a resample flips it at random)."""

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, X, conditions=None, targets=None):
        import hashlib

        bits = hashlib.sha1(np.ascontiguousarray(np.asarray(X, dtype=float)).tobytes()).digest()[0]
        A = np.zeros((3, 3))
        A[(0, 1) if bits & 1 else (1, 0)] = 1.0
        A[(1, 2) if bits & 2 else (2, 1)] = 1.0
        self.adjacency_ = A
        return self


def _abc_with_a_run(seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.standard_normal((400, 3)), columns=list("abc"))
    return X, ["obs"] * 300 + ["do a"] * 100


def test_entropy_leaves_out_edges_an_experiment_already_run_has_cut():
    # The family {{}, {a}}: the data of "do a" orient a -- b (one end in {a}, Hauser and Buehlmann
    # 2012, Theorem 10 (iii)), however the refits waver on it. The entropy counts only b -- c:
    # a scores 0, b and c the same H(b -- c). Before, a scored H(a -- b) > 0 and could come first.
    X, conditions = _abc_with_a_run()
    ranking = rank_interventions(X, conditions=conditions, targets={"do a": ["a"]}, estimator=_Wavering(),
                                 n_bootstrap=16, random_state=0, criterion="entropy")
    p_bc = ranking.loc["c", "score"]
    assert 0.5 < p_bc <= 1.0                  # b -- c wavered: its direction entropy in bits
    assert ranking.loc["a", "score"] == 0.0
    assert ranking.loc["b", "score"] == pytest.approx(p_bc)
    assert list(ranking.index)[-1] == "a"
    # without the experiment, a -- b counts: a scores its own wavering
    free = rank_interventions(X, estimator=_Wavering(), n_bootstrap=16, random_state=0, criterion="entropy")
    assert free.loc["a", "score"] > 0.5
    assert free.loc["b", "score"] == pytest.approx(free.loc["a", "score"] + free.loc["c", "score"])


def test_the_default_criterion_is_the_first_of_defaults():
    # docs/planning.md, "Which criterion by default": entropy, measured against oriented on 90
    # graphs under the library's default solver (benchmarks/results/planning_criteria.md)
    from colide_core import defaults

    assert defaults.PLAN_CRITERIA[0] == "entropy" and planning.CRITERIA == defaults.PLAN_CRITERIA
    X, conditions = _abc_with_a_run()
    ranking = rank_interventions(X, estimator=_Wavering(), n_bootstrap=4, random_state=0)
    assert ranking.attrs["criterion"] == "entropy"


def test_invalid_input_is_refused():
    X = _fork(200)
    with pytest.raises(InvalidParameterError, match="unknown node"):
        rank_interventions(X, candidates=["nope"], n_bootstrap=0)
    with pytest.raises(InvalidParameterError, match="n_bootstrap"):
        rank_interventions(X, n_bootstrap=-1)
    with pytest.raises(InvalidParameterError, match="n_bootstrap"):
        rank_interventions(X, n_bootstrap=2.5)
    with pytest.raises(InvalidParameterError, match="criterion"):
        rank_interventions(X, criterion="best", n_bootstrap=0)
    with pytest.raises(InvalidParameterError, match="candidates"):
        rank_interventions(X, candidates=[], n_bootstrap=0)
    with pytest.raises(ValueError, match="targets need conditions"):
        rank_interventions(X, targets={"a": ["z"]}, n_bootstrap=0)
    with pytest.raises(ValueError):
        rank_interventions(X, conditions=["a"] * 3, n_bootstrap=0)  # one label per row


def test_the_callers_data_are_not_modified():
    X = _fork(500)
    before = X.copy()
    arr = X.to_numpy().copy()
    arr_before = arr.copy()
    conditions = np.array(["o"] * 300 + ["i"] * 200, dtype=object)
    rank_interventions(X, variant="ev", conditions=conditions, targets={"i": ["x"]}, n_bootstrap=2, random_state=0)
    rank_interventions(arr, variant="ev", n_bootstrap=2, random_state=0)
    pd.testing.assert_frame_equal(X, before)
    assert (arr == arr_before).all() and (conditions[:300] == "o").all()


# --- the CLI -----------------------------------------------------------------------------------

def test_cli_plan_prints_and_writes_the_ranking(tmp_path):
    import subprocess
    import sys

    # the fork of _fork(): z first with its 3 edges, the leaves 1 each (derived above)
    _fork(2000).to_csv(tmp_path / "d.csv", index=False)
    cmd = [sys.executable, "-m", "colide_core", "plan", "d.csv", "--variant", "ev", "--n-bootstrap", "2",
           "--criterion", "oriented", "--out", "plan.csv"]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("ranked 4 single-node interventions") and "2 bootstrap refits of CoLiDE-EV" in lines[0]
    assert lines[2].split()[:4] == ["1", "z", "3.0", "3"]
    plan = pd.read_csv(tmp_path / "plan.csv")
    assert plan["node"].tolist()[0] == "z" and plan["score"].tolist() == [3.0, 1.0, 1.0, 1.0]
    assert plan.loc[0, "edge_probability"] == "z\u2014x=1.00, z\u2014y=1.00, z\u2014w=1.00"
    # the fit it starts from is recorded as a manifest, the plan under extra.plan
    import json

    man = json.loads((tmp_path / "plan.manifest.json").read_text())
    assert man["extra"]["plan"]["n_bootstrap"] == 2 and man["extra"]["plan"]["criterion"] == "oriented"
    assert man["extra"]["plan"]["table"]["node"][0] == "z" and man["params"]["variant"] == "ev"
    again = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert again.returncode == 2 and "--force" in again.stderr  # never replaces a file silently
    bad = subprocess.run(cmd[:5] + ["--candidates", "z,nope"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert bad.returncode == 2 and "--candidates: not a column of d.csv: 'nope'" in bad.stderr
