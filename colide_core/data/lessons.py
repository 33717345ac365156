"""Lesson scenarios: one prepared dataset and settings per idea of causal discovery.

Each :class:`Lesson` builds its data with the project's one simulation protocol
(:func:`colide_core.data.simulate.simulate_dataset`) or a small hand-built linear SEM sampled with
:func:`colide_core.data.simulate.simulate_linear_sem`, and says which settings to fit it with and what
the class should see. ``tests/test_lessons.py`` fits every lesson and checks that it shows its
idea (the numbers quoted in ``expected``).

Convention: ``X`` is ``(n_samples, n_nodes)``; ``B_true[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from colide_core.data.simulate import simulate_dataset, simulate_linear_sem

__all__ = ["Lesson", "LESSONS", "lesson_data", "LessonData"]


@dataclass(frozen=True)
class LessonData:
    """The dataset of a lesson.

    Attributes
    ----------
    X : pandas.DataFrame of shape (n_samples, n_nodes)
    B_true : pandas.DataFrame of shape (n_nodes, n_nodes)
        The true DAG, 0/1, labelled by the column names.
    sigma_true : ndarray of shape (n_nodes,)
        True noise standard deviations in the units of ``X``.
    conditions : tuple of str of length n_samples, optional
        Each row's condition, for a lesson with interventions (``CoLiDE.fit(conditions=...)``).
    targets : dict of str -> list of str, optional
        The nodes each condition intervenes on (``CoLiDE.fit(targets=...)``).
    """

    X: pd.DataFrame
    B_true: pd.DataFrame
    sigma_true: np.ndarray
    conditions: tuple | None = None
    targets: dict | None = None


@dataclass(frozen=True)
class Lesson:
    """One lesson: what it shows, how to fit it, what to look for.

    Attributes
    ----------
    key : str
    title : str
    idea : str
        One sentence: the idea of the field it shows.
    explanation : str
        A short paragraph for the student (plain text, Markdown allowed).
    settings : dict
        The Learn page's settings: ``variant`` ("ev"/"nv"), ``lambda1``, ``threshold``.
    try_next : str
        What to change to see the idea (another setting, the other noise model, ...).
    expected : str
        The outcome the tests check.
    extra : str
        The optional extra its data need (``"networks"`` for a bnlearn network), or ``""``.
    """

    key: str
    title: str
    idea: str
    explanation: str
    settings: dict = field(default_factory=dict)
    try_next: str = ""
    expected: str = ""
    extra: str = ""


def _frame(X, B, std, names):
    X = pd.DataFrame(np.asarray(X, dtype=float), columns=list(names))
    B = pd.DataFrame((np.asarray(B) != 0).astype(int), index=list(names), columns=list(names))
    return LessonData(X=X, B_true=B, sigma_true=np.asarray(std, dtype=float))


def _sem(W, names, n=2000, noise_var=1.0, seed=0):
    W = np.asarray(W, dtype=float)
    X, std = simulate_linear_sem(W, n, "gaussian", noise_var=noise_var, random_state=seed)
    return _frame(X, W != 0, std, names)


def _collider():
    # x -> z <- y: the v-structure is identifiable from independence alone (x and y independent).
    W = np.zeros((3, 3))
    W[0, 2], W[1, 2] = 1.0, 1.0
    return _sem(W, ("x", "y", "z"))


def _markov():
    # rain -> wet, equal noise: EV identifies it, but a reversed edge has the same CPDAG
    # (one undirected edge), so SHD-C forgives what SHD counts. With NV on 2 variables both
    # directions fit equally well (Markov equivalent) and the solver picks one.
    W = np.array([[0.0, 1.0], [0.0, 0.0]])
    X, std = simulate_linear_sem(W, 2000, "gaussian", noise_var=np.array([1.0, 1.0]), random_state=3)
    X = X * np.array([1.0, 0.4])  # the effect is measured on a smaller scale: its variance is lower
    return _frame(X, W != 0, std * np.array([1.0, 0.4]), ("rain", "wet"))


def _varsort(standardize):
    d = simulate_dataset(n_nodes=10, degree=2, graph="er", variance="ev", n_samples=1000,
                         standardize=standardize, random_state=7)
    return _frame(d.X, d.B_true, d.noise_std, [f"X{k + 1}" for k in range(10)])


def _scale():
    d = simulate_dataset(n_nodes=10, degree=2, graph="er", variance="ev", n_samples=1000, random_state=7)
    unit = np.ones(10)
    unit[[0, 3, 6]] = 1000.0  # three columns in other units (grams -> milligrams)
    return _frame(d.X * unit, d.B_true, d.noise_std * unit, [f"X{k + 1}" for k in range(10)])


def _hetero():
    # Seed 9 (issue 51): with the default solver, which now returns the order search's lower score,
    # seed 3 gave EV and NV the same SHD (10); on seed 9 EV is misled (SHD 19) and NV is not (11).
    d = simulate_dataset(n_nodes=10, degree=2, graph="er", variance="nv", noise_var_range=(0.5, 10.0),
                         n_samples=1000, random_state=9)
    return _frame(d.X, d.B_true, d.noise_std, [f"X{k + 1}" for k in range(10)])


def _lambda():
    d = simulate_dataset(n_nodes=10, degree=2, graph="er", variance="ev", n_samples=200, random_state=11)
    return _frame(d.X, d.B_true, d.noise_std, [f"X{k + 1}" for k in range(10)])


def _interventions(mode):
    # An ER2 graph on 8 nodes, equal noise variances: 1,000 observational rows and 4 conditions of
    # 500 rows, each a hard intervention on one node (its value drawn from its own noise, its
    # parents cut). Seed 21: CoLiDE-NV (the default solver, issue 51) gets 4 edges wrong from the
    # observational rows alone, 5 from all rows pooled as if they were one sample, and none once the
    # targets are known. (Seed 0 gave 4, 4, 0 with the fast solver alone; the order search finds its
    # observational graph exactly.)
    sim = simulate_dataset({"graph": "er", "degree": 2, "n_nodes": 8, "n_samples": 1000, "variance": "ev"}, 21,
                           interventions={"n_conditions": 4, "n_targets": 1, "n_per_condition": 500})
    names = [f"X{k + 1}" for k in range(8)]
    rows = np.asarray(sim.conditions) == "obs" if mode == "observational" else slice(None)
    data = _frame(np.asarray(sim.X)[rows], sim.B_true, sim.noise_std, names)
    if mode != "known":
        return data
    targets = {str(c): [names[j] for j in nodes] for c, nodes in sim.targets.items()}
    return LessonData(X=data.X, B_true=data.B_true, sigma_true=data.sigma_true,
                      conditions=tuple(str(c) for c in sim.conditions), targets=targets)


def _real_scales(standardize):
    # ecoli70 from the bnlearn repository (the `networks` extra): 1,000 rows, seed 0, in the units of
    # its source data or each column scaled to unit variance (sigma_true scaled with it). Measured
    # with the defaults (CoLiDE-NV, lambda 0.05, threshold 0.3): raw SHD 32 (39 of 70 arcs, 5
    # reversed, 1 extra; SHD-C 34), standardised SHD 36 (35 arcs, 8 reversed, 1 extra; SHD-C 49).
    from colide_core.data.networks import load_network
    from colide_core.data.sortability import standardize as scale_columns

    d = load_network("ecoli70", 1000, random_state=0)
    X, std = d.X.to_numpy(), d.noise_std
    if standardize:
        sd = X.std(axis=0)
        X, std = scale_columns(X), std / sd
    return _frame(X, d.B_true, std, d.node_names)


def _seeing_doing():
    # temperature -> ice_cream (1.5), temperature -> drownings (1.2), no edge between the two;
    # unit noise variances (EV). Seeing ice cream 1 sd higher predicts drownings higher by
    # corr = 1.5 * 1.2 / sqrt((1.5^2 + 1) (1.2^2 + 1)) = 1.8 / sqrt(3.25 * 2.44) = 0.639 sd;
    # doing it (selling more ice cream) moves drownings by 0: the association is confounded.
    W = np.zeros((3, 3))
    W[0, 1], W[0, 2] = 1.5, 1.2
    return _sem(W, ("temperature", "ice_cream", "drownings"), seed=5)


_BUILDERS = {
    "collider": _collider,
    "markov": _markov,
    "varsort_raw": lambda: _varsort(False),
    "varsort_std": lambda: _varsort(True),
    "scale": _scale,
    "hetero": _hetero,
    "lambda": _lambda,
    "iv_observational": lambda: _interventions("observational"),
    "iv_pooled": lambda: _interventions("pooled"),
    "iv_known": lambda: _interventions("known"),
    "seeing_doing": _seeing_doing,
    "real_raw": lambda: _real_scales(False),
    "real_std": lambda: _real_scales(True),
}

#: Every lesson, in teaching order.
LESSONS = {
    lesson.key: lesson for lesson in (
        Lesson(
            "collider", "Chain, fork and collider",
            "A chain x → y → z and a fork x ← y → z imply the same independences; a collider x → z ← y does not.",
            "Here x and y are independent causes of z (a collider, or v-structure). Unlike a chain or a fork, "
            "a collider leaves a trace in the data: x and y are independent, but become dependent once z is "
            "known. That is why its arrows can be oriented from observational data.",
            {"variant": "ev", "lambda1": 0.05, "threshold": 0.3},
            "Look at the Metrics tab: SHD and SHD-C are both 0. In a chain or fork only the skeleton is "
            "determined by independences; here the directions are too.",
            "both edges x → z and y → z found, SHD = 0",
        ),
        Lesson(
            "markov", "Markov equivalence",
            "Graphs with the same skeleton and colliders (a Markov equivalence class) fit the data equally well.",
            "Two variables, rain → wet. With only two variables, rain → wet and wet → rain imply the same "
            "independences: they are Markov equivalent. The effect was measured on a smaller scale, so an "
            "equal-variance method orients it the wrong way. SHD counts the reversed edge as an error; SHD-C, "
            "which compares the equivalence classes (CPDAGs), forgives it.",
            {"variant": "ev", "lambda1": 0.05, "threshold": 0.3},
            "Compare SHD (1) and SHD-C (0) in the Metrics tab.",
            "the edge is found reversed: SHD = 1, SHD-C = 0",
        ),
        Lesson(
            "varsort_raw", "The varsortability trap (raw data)",
            "On simulated data the variance grows along the causal order; methods can exploit this by accident.",
            "These data come from the usual benchmark (ER2, equal noise variances), in their raw units. The "
            "variances grow along the causal order, and CoLiDE-EV recovers the graph well. Now load the "
            "standardised version of the same data: every column has unit variance and the same fit gets "
            "much worse. The information was in the scales, not in the causal structure.",
            {"variant": "ev", "lambda1": 0.05, "threshold": 0.3},
            "Load the lesson 'The varsortability trap (standardised)' and compare the SHD.",
            "raw: SHD small; standardised: SHD larger",
        ),
        Lesson(
            "varsort_std", "The varsortability trap (standardised)",
            "Standardising removes the variance pattern a method may have relied on.",
            "The same data as the raw lesson, each column divided by its standard deviation. The graph is the "
            "same, but the fit is worse: on the raw data the fit was helped by the variances growing along "
            "the causal order (varsortability).",
            {"variant": "ev", "lambda1": 0.05, "threshold": 0.3},
            "Compare with the raw lesson's SHD.",
            "SHD larger than on the raw data",
        ),
        Lesson(
            "scale", "The scale trap",
            "Changing the units of a variable changes what a least-squares-type score finds.",
            "The raw-data lesson again, with three columns expressed in other units (×1000, grams to "
            "milligrams). The causal graph is the same, but the learned graph changes: a continuous score "
            "on raw data is not invariant to units.",
            {"variant": "ev", "lambda1": 0.05, "threshold": 0.3},
            "Compare with the raw lesson's graph and SHD.",
            "a different graph than on the raw lesson, with a larger SHD",
        ),
        Lesson(
            "hetero", "EV vs NV on heteroscedastic noise",
            "When each variable has its own noise variance, a score that assumes equal variances is misled.",
            "The noise variances differ between nodes (from 0.5 to 10). CoLiDE-EV assumes one shared "
            "variance; CoLiDE-NV estimates one per node. Pick Both in the Noise model and compare.",
            {"variant": "nv", "lambda1": 0.05, "threshold": 0.3},
            "Pick Both in the Noise model: NV's SHD is lower, and its σ̂ per node follows the true σ (Noise tab).",
            "NV has a lower SHD than EV",
        ),
        Lesson(
            "lambda", "λ too small and too large",
            "The L1 weight λ trades fit for sparsity: too small gives extra edges, too large loses true ones.",
            "A 10-node graph with 20 true edges and only 200 samples, with a low threshold (0.05). With "
            "λ = 0.001 the graph has many extra edges (it fits the noise); with λ = 2 half the true edges are "
            "gone. The paper's λ = 0.05 (threshold 0.3) recovers the graph almost exactly. Move λ and watch "
            "the edges appear and vanish.",
            {"variant": "ev", "lambda1": 0.001, "threshold": 0.05},
            "Set λ to 2, then to 0.05 with threshold 0.3, and compare the edge counts and SHD; the Explorer "
            "shows the whole λ path.",
            "λ = 0.001: more edges than the truth; λ = 2: fewer; λ = 0.05: the lowest SHD of the three",
        ),
        Lesson(
            "iv_observational", "What do interventions buy you? (1: observational data)",
            "From observational data alone some directions cannot be told apart.",
            "An 8-node graph with 16 edges, 1,000 observational samples. CoLiDE-NV learns it with 4 errors: "
            "some arrows point the wrong way, because several graphs explain these data about equally well. "
            "The next two lessons add 2,000 samples from four experiments, each forcing one variable to "
            "values of its own (a hard intervention).",
            {"variant": "nv", "lambda1": 0.05, "threshold": 0.3},
            "Load 'What do interventions buy you? (2: pooled)' and compare the SHD.",
            "SHD 4 from the observational rows alone",
        ),
        Lesson(
            "iv_pooled", "What do interventions buy you? (2: pooled)",
            "Experimental data pooled as if they were one sample do not help, and can hurt.",
            "The same graph with all 3,000 samples, the four experiments mixed in as if they were ordinary "
            "observations. The intervened variables no longer follow their parents in those rows, so the "
            "pooled data fit no single linear model: the errors stay, and one more appears.",
            {"variant": "nv", "lambda1": 0.05, "threshold": 0.3},
            "Load 'What do interventions buy you? (3: targets known)'.",
            "SHD 5 with the experiments pooled",
        ),
        Lesson(
            "iv_known", "What do interventions buy you? (3: targets known)",
            "Knowing which variable each experiment set orients the edges around it.",
            "The same 3,000 samples, now with each row's experiment and its target known. CoLiDE fits an "
            "intercept per experiment and leaves an intervened variable's own equation out of the rows where "
            "it was set: its value there says nothing about its parents, but it still acts on its children. "
            "The edges at the targets are labelled 'intervention' in the drawing.",
            {"variant": "nv", "lambda1": 0.05, "threshold": 0.3},
            "Compare with the first two lessons: SHD 4, 5, then 0. The Data page's Conditions tab shows how each "
            "experiment moved each variable.",
            "SHD 0 with the targets known",
        ),
        Lesson(
            "seeing_doing", "Seeing is not doing",
            "An association predicts what you will see, not what an intervention will do.",
            "Hot days sell more ice cream, and more people drown on hot days; ice cream drowns nobody. In "
            "these data temperature causes both, and the two are strongly correlated. Regression on ice "
            "cream (seeing) predicts more drownings when more ice cream is sold; the learned graph predicts "
            "what selling more ice cream would do (doing): nothing to drownings, because the only path "
            "between them goes back through temperature.",
            {"variant": "ev", "lambda1": 0.05, "threshold": 0.3},
            "Open the Predict page and intervene on ice_cream: compare the two bars of drownings. Then "
            "intervene on temperature: now seeing and doing agree. Last, apply the Data page's standardise "
            "transform and come back: the Predict page now warns that the variables' scales carry no causal "
            "order (every column has variance 1), and its GES + IDA column (Compute GES + IDA) shows what "
            "the data allow without them: for ice_cream on drownings a range from about 0 (doing) to about 0.6 sd "
            "(seeing), because this fork's equivalence class leaves the direction of both edges open.",
            "the graph temperature → ice_cream, temperature → drownings; shifting ice_cream by 1 sd: seeing "
            "moves drownings by about 0.64 sd, doing by 0",
        ),
        Lesson(
            "real_raw", "Real scales (1: ecoli70, raw)",
            "On a network estimated from real data the variances follow the causal order only in part.",
            "ecoli70 is a linear Gaussian network of 46 E. coli genes and 70 arcs, estimated from gene "
            "expression data (Schäfer and Strimmer 2005; the bnlearn repository). These 1,000 rows are drawn "
            "from it in its own units. Its variances grow along the causal order on about 70 % of its paths "
            "(varsortability 0.72; near 1 in the simulated trap lesson), so the scales help less: CoLiDE-NV "
            "with the defaults finds 39 of the 70 arcs and reverses 5 (SHD 32), far from the simulated "
            "lesson's near-perfect raw fit. The graph is an estimate from its paper, not a validated truth.",
            {"variant": "nv", "lambda1": 0.05, "threshold": 0.3},
            "Load 'Real scales (2: ecoli70, standardised)' and compare the SHD and SHD-C.",
            "raw: SHD 32 (39 of 70 arcs, 5 reversed), SHD-C 34",
            extra="networks",
        ),
        Lesson(
            "real_std", "Real scales (2: ecoli70, standardised)",
            "What the variance order gave the learner on real scales is a few directions, not the graph.",
            "The same 1,000 rows of ecoli70, each column scaled to unit variance: the variance order is gone "
            "(varsortability 0.5). CoLiDE-NV with the defaults still finds 35 of the 70 arcs, but reverses 8 "
            "(SHD 36, against 32 raw), and SHD-C, which scores the equivalence classes, rises from 34 to 49. "
            "The scales gave some directions; the skeleton it finds is left. On the simulated data of the "
            "trap lessons standardising cost more than 10 SHD.",
            {"variant": "nv", "lambda1": 0.05, "threshold": 0.3},
            "Compare with the raw lesson: SHD 32 and 36, SHD-C 34 and 49. docs/networks.md has the other "
            "three networks and the baselines.",
            "standardised: SHD 36 (35 arcs, 8 reversed), SHD-C 49: worse than raw, by less than on simulated data",
            extra="networks",
        ),
    )
}


def lesson_data(key) -> LessonData:
    """The dataset of lesson ``key`` (deterministic: the same numbers on every call).

    Parameters
    ----------
    key : str
        A key of :data:`LESSONS`.

    Returns
    -------
    LessonData

    Raises
    ------
    KeyError
        For an unknown lesson.
    """
    if key not in _BUILDERS:
        raise KeyError(f"unknown lesson {key!r}; choose one of {sorted(_BUILDERS)}.")
    return _BUILDERS[key]()
