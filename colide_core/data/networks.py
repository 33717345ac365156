"""Real networks beside Sachs: the four Gaussian Bayesian networks of the bnlearn repository.

Each network is a linear Gaussian SEM (a graph, each node's regression on its parents with an
intercept, and a residual variance) whose structure and parameters were estimated from real data
in its paper; they are standard benchmarks of structure learning:

* ``ecoli70``: 46 nodes, 70 arcs (E. coli gene expression; Schaefer and Strimmer 2005);
* ``magic-niab``: 44 nodes, 66 arcs (wheat, a MAGIC population; Scutari et al. 2014);
* ``magic-irri``: 64 nodes, 102 arcs (rice, a MAGIC population; Scutari et al. 2016);
* ``arth150``: 107 nodes, 150 arcs (Arabidopsis thaliana gene expression; Opgen-Rhein and
  Strimmer 2007).

They are estimates, not validated causal truths, and they keep the scales of their data (the
coefficients of magic-irri reach 27 in absolute value and its residual variances 77): see
``docs/networks.md``.

Where they come from. The wheel of ``pgmpy-no-torch`` 1.0.4 (MIT) ships them as JSON files in
``pgmpy/utils/example_models/``, converted from the bnlearn repository's ``bn.fit`` objects; the
optional extra ``networks`` of colide-dashboard pins it. The files are read as data of that
installed distribution (:func:`importlib.metadata.distribution`), **without importing pgmpy**, and
nothing is downloaded. The files are not copied into this project: the bnlearn repository's own
terms for the data could not be checked offline.

Each file gives ``nodes``, ``arcs`` and, per node, ``cpds[node] = {"coefficients":
{"(Intercept)": [b], parent: [w], ...}, "variance": [v], "parents": [...]}``, read as the SEM::

    x_j = b_j + sum_{i in pa(j)} W[i, j] x_i + z_j,    z_j ~ N(0, v_j)

with the project's conventions: ``X`` is ``(n_samples, n_nodes)`` (the paper writes d x n) and
``W[i, j] != 0`` means the edge i -> j. Samples are drawn by the project's one linear-SEM simulator
(:func:`colide_core.data.simulate.simulate_linear_sem`, hard interventions by
:func:`colide_core.data.simulate.simulate_conditions`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from colide_core.exceptions import InvalidParameterError, MissingExtraError

__all__ = ["NETWORKS", "DISTRIBUTION", "DISTRIBUTION_VERSION", "EXTRA", "NetworkInfo", "Network", "NetworkData",
           "network_available", "network_summary", "read_network", "load_network"]

#: The distribution that ships the files, the version pinned by the extra, and the extra.
DISTRIBUTION = "pgmpy-no-torch"
DISTRIBUTION_VERSION = "1.0.4"
EXTRA = "networks"
#: Where the files lie inside the distribution.
_FOLDER = "pgmpy/utils/example_models"
#: Largest file read (the four are 10-23 KB).
_MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class NetworkInfo:
    """What the bnlearn repository says of one network (the counts are checked on reading).

    Attributes
    ----------
    nodes, arcs : int
        The number of nodes and arcs.
    title : str
        What the nodes are.
    source : str
        The paper the graph and parameters were estimated in.
    """

    nodes: int
    arcs: int
    title: str
    source: str


#: The four networks, name -> :class:`NetworkInfo`.
NETWORKS = MappingProxyType({
    "ecoli70": NetworkInfo(46, 70, "E. coli gene expression",
                           "Schaefer and Strimmer (2005), Stat. Appl. Genet. Mol. Biol. 4(1)"),
    "magic-niab": NetworkInfo(44, 66, "wheat traits and genetic markers (MAGIC population, NIAB)",
                              "Scutari, Howell, Balding and Mackay (2014), Genetics 198(1)"),
    "magic-irri": NetworkInfo(64, 102, "rice traits and genetic markers (MAGIC population, IRRI)",
                              "Scutari, Mackay and Balding (2016), PLoS Genetics 12(9)"),
    "arth150": NetworkInfo(107, 150, "Arabidopsis thaliana gene expression",
                           "Opgen-Rhein and Strimmer (2007), BMC Systems Biology 1:37"),
})


def _check_name(name) -> str:
    if not isinstance(name, str) or name not in NETWORKS:
        shown = repr(name)[:60] if isinstance(name, str) else type(name).__name__
        raise InvalidParameterError(f"name must be one of {list(NETWORKS)}, got {shown}.")
    return name


def _distribution():
    """The installed ``pgmpy-no-torch`` distribution, or :class:`MissingExtraError` naming the extra."""
    import importlib.metadata

    try:
        return importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise MissingExtraError("pgmpy", "Reading the bnlearn repository's networks") from None


def network_available() -> bool:
    """Whether the networks can be read here (the ``networks`` extra is installed).

    Returns
    -------
    bool
        True when ``pgmpy-no-torch`` is installed and ships ``ecoli70.json``.
    """
    try:
        _network_file("ecoli70")
    except MissingExtraError:
        return False
    return True


def _network_file(name):
    dist = _distribution()
    path = dist.locate_file(f"{_FOLDER}/{name}.json")
    if not path.is_file():  # another version of the distribution, without the example models
        raise MissingExtraError("pgmpy", f"The bnlearn network {name!r} ({_FOLDER}/{name}.json of "
                                         f"{DISTRIBUTION} {DISTRIBUTION_VERSION}; version {dist.version} is "
                                         "installed, without the file)")
    return path


def _number(value, what) -> float:
    """``[x]`` or ``x`` as a finite float (the files wrap each number in a list, as R's jsonlite does)."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {str(value)[:40]!r}.")
    return float(value)


@dataclass(frozen=True, eq=False)
class Network:
    """One network's true linear Gaussian SEM, as parsed from its file.

    Attributes
    ----------
    name : str
        A key of :data:`NETWORKS`.
    nodes : tuple of str
        Node names, in the file's order (the order of every array below).
    B : ndarray of shape (n_nodes, n_nodes)
        The true DAG from the file's arcs, ``B[i, j] == 1`` meaning i -> j.
    W : ndarray of shape (n_nodes, n_nodes)
        The true weights: ``W[i, j]`` is node j's regression coefficient on its parent i (data units).
    intercepts : ndarray of shape (n_nodes,)
        Each node's intercept ``b_j`` (data units).
    noise_var : ndarray of shape (n_nodes,)
        Each node's residual variance ``v_j`` (squared data units).

    The arrays are read-only.
    """

    name: str
    nodes: tuple
    B: np.ndarray
    W: np.ndarray
    intercepts: np.ndarray
    noise_var: np.ndarray

    @property
    def info(self) -> NetworkInfo:
        """The network's :class:`NetworkInfo`."""
        return NETWORKS[self.name]

    def mean(self) -> np.ndarray:
        """The implied mean of every node, ``b (I - W)^-1``, shape (n_nodes,)."""
        from colide_core.data.simulate import sem_mean

        return sem_mean(self.W, self.intercepts)

    def covariance(self) -> np.ndarray:
        """The implied covariance of the nodes, shape (n_nodes, n_nodes).

        ``x = x W + z + b`` gives ``x = (z + b)(I - W)^-1``, so
        ``Cov(x) = (I - W)^-T diag(noise_var) (I - W)^-1``.
        """
        inv = np.linalg.inv(np.eye(len(self.nodes)) - self.W)
        return inv.T @ (self.noise_var[:, None] * inv)

    def varsortability(self) -> float:
        """Varsortability of the network itself, from its implied marginal variances (no sampling).

        The share of directed paths along which the marginal variance grows (Reisach, Seiler and
        Weichwald 2021), :func:`colide_core.data.simulate.path_sortability` of the diagonal of
        :meth:`covariance` along ``B``: 1 means sorting by variance gives the causal order, 0.5
        is no information, below 0.5 the variances shrink along it.

        Returns
        -------
        float in [0, 1]
        """
        from colide_core.data.simulate import path_sortability

        return float(path_sortability(np.diag(self.covariance()), self.B))


def read_network(name) -> Network:
    """Read one network's true SEM from the ``networks`` extra, offline, without importing pgmpy.

    Parameters
    ----------
    name : {"ecoli70", "magic-niab", "magic-irri", "arth150"}
        A key of :data:`NETWORKS`.

    Returns
    -------
    Network
        Parsed and checked (cached: each file is read once per process).

    Raises
    ------
    InvalidParameterError
        For an unknown name.
    MissingExtraError
        When ``pgmpy-no-torch`` is not installed (the message says ``pip install
        'colide-dashboard[networks]'``), or the installed version lacks the file.
    ValueError
        When the file is not what was shipped: an unknown node in an arc or a CPD, a CPD whose
        parents are not the node's arcs, a number that is not finite, a variance that is not > 0,
        a directed cycle, or node and arc counts other than :data:`NETWORKS`'.

    Examples
    --------
    >>> net = read_network("ecoli70")
    >>> net.W.shape, int(net.B.sum())
    ((46, 46), 70)
    >>> dict(zip(net.nodes, net.W[:, net.nodes.index("aceB")].round(4)))["icdA"]   # aceB = 0.1324 + 1.0464 icdA
    np.float64(1.0464)
    """
    return _read_network(_check_name(name))


@functools.lru_cache(maxsize=len(NETWORKS))
def _read_network(name) -> Network:
    """:func:`read_network` of a checked name, cached (each file is read once per process)."""
    from colide_core._json import read_json
    from colide_core.graph._dag import is_dag

    path = _network_file(name)
    doc = read_json(path.read_bytes()[:_MAX_BYTES + 1], what=f"{name}.json", max_bytes=_MAX_BYTES)
    if not isinstance(doc, dict) or not {"nodes", "arcs", "cpds"} <= set(doc):
        raise ValueError(f"{name}.json must hold 'nodes', 'arcs' and 'cpds'.")
    nodes = doc["nodes"]
    if not isinstance(nodes, list) or not all(isinstance(v, str) for v in nodes) or len(set(nodes)) != len(nodes):
        raise ValueError(f"{name}.json: 'nodes' must be a list of distinct names.")
    index = {v: i for i, v in enumerate(nodes)}
    d = len(nodes)
    B = np.zeros((d, d))
    for arc in doc["arcs"]:
        if not (isinstance(arc, list) and len(arc) == 2 and all(isinstance(v, str) and v in index for v in arc)):
            raise ValueError(f"{name}.json: an arc {str(arc)[:60]} is not a pair of its nodes.")
        if B[index[arc[0]], index[arc[1]]]:
            raise ValueError(f"{name}.json: the arc {arc[0]} -> {arc[1]} is listed twice.")
        B[index[arc[0]], index[arc[1]]] = 1.0
    W = np.zeros((d, d))
    b = np.zeros(d)
    var = np.zeros(d)
    cpds = doc["cpds"]
    if not isinstance(cpds, dict) or set(cpds) != set(nodes):
        raise ValueError(f"{name}.json: 'cpds' must have one entry per node.")
    for node, cpd in cpds.items():
        j = index[node]
        coef = cpd.get("coefficients") if isinstance(cpd, dict) else None
        parents = cpd.get("parents") if isinstance(cpd, dict) else None
        if not isinstance(coef, dict) or not isinstance(parents, list):
            raise ValueError(f"{name}.json: the CPD of {node} must give 'coefficients' and 'parents'.")
        if set(parents) != set(np.asarray(nodes)[B[:, j] != 0]) or set(coef) != {"(Intercept)", *parents}:
            raise ValueError(f"{name}.json: the parents of {node} in its CPD are not its arcs.")
        b[j] = _number(coef["(Intercept)"], f"the intercept of {node}")
        for p in parents:
            W[index[p], j] = _number(coef[p], f"the coefficient of {p} -> {node}")
        # a variance, not an sd, although pgmpy passes it as LinearGaussianCPD(std=...): the evidence
        # (magic-irri's 0/2 markers, bn.fit's sd squared) is in docs/networks.md
        var[j] = _number(cpd.get("variance"), f"the variance of {node}")
        if var[j] <= 0:
            raise ValueError(f"{name}.json: the variance of {node} must be > 0, got {var[j]!r}.")
    info = NETWORKS[name]
    if (d, int(B.sum())) != (info.nodes, info.arcs):
        raise ValueError(f"{name}.json has {d} nodes and {int(B.sum())} arcs; the bnlearn repository lists "
                         f"{info.nodes} and {info.arcs}.")
    if not is_dag(B):
        raise ValueError(f"{name}.json: the arcs have a directed cycle.")
    for a in (B, W, b, var):
        a.setflags(write=False)
    return Network(name, tuple(nodes), B, W, b, var)


def network_summary() -> pd.DataFrame:
    """One row per network: what it is, its size, its scales and its varsortability.

    Returns
    -------
    pandas.DataFrame
        Indexed by name, columns ``title``, ``nodes``, ``arcs``, ``max_abs_w`` (largest |W|),
        ``noise_var_min``, ``noise_var_max``, ``marginal_var_min``, ``marginal_var_max`` (the
        implied variances of the nodes, squared data units) and ``varsortability``
        (:meth:`Network.varsortability`), and ``source`` (the paper).

    Raises
    ------
    MissingExtraError
        When the ``networks`` extra is not installed.
    """
    rows = {}
    for name, info in NETWORKS.items():
        net = read_network(name)
        marginal = np.diag(net.covariance())
        rows[name] = {"title": info.title, "nodes": info.nodes, "arcs": info.arcs,
                      "max_abs_w": float(np.abs(net.W).max()), "noise_var_min": float(net.noise_var.min()),
                      "noise_var_max": float(net.noise_var.max()), "marginal_var_min": float(marginal.min()),
                      "marginal_var_max": float(marginal.max()), "varsortability": net.varsortability(),
                      "source": info.source}
    return pd.DataFrame.from_dict(rows, orient="index")


@dataclass(frozen=True, eq=False)
class NetworkData:
    """Samples of a network with its true graph and SEM (:func:`load_network`).

    Attributes
    ----------
    name : str
        The network (a key of :data:`NETWORKS`).
    X : pandas.DataFrame of shape (n_rows, n_nodes)
        The samples, columns named by the nodes; ``n_rows`` is ``n_samples`` (plus the
        interventional rows, after them, when asked for).
    B_true : ndarray of shape (n_nodes, n_nodes)
        The true DAG, ``B_true[i, j] == 1`` meaning i -> j.
    W_true : ndarray of shape (n_nodes, n_nodes)
        The true weights (data units).
    intercepts : ndarray of shape (n_nodes,)
        The true intercepts (data units).
    noise_var : ndarray of shape (n_nodes,)
        The true residual variances (squared data units); ``noise_std`` their square roots.
    spec : dict
        ``{"network", "n_samples", "seed"}`` and, with interventions, ``"interventions"`` (the
        checked settings, with the drawn targets as node indices).
    conditions : ndarray of object of shape (n_rows,) or None
        Each row's condition (``"obs"``, ``"iv1"``, ...), with interventions only.
    targets : dict or None
        Condition -> the node names it intervenes on (``[]`` for ``"obs"``), the ``targets``
        argument of :meth:`colide_core.CoLiDE.fit`; with interventions only.
    shifts : ndarray of shape (n_conditions + 1, n_nodes) or None
        Each condition's intercept shift (row 0 zero), with interventions only.
    """

    name: str
    X: pd.DataFrame
    B_true: np.ndarray
    W_true: np.ndarray
    intercepts: np.ndarray
    noise_var: np.ndarray
    spec: dict
    conditions: np.ndarray | None = None
    targets: dict | None = None
    shifts: np.ndarray | None = None

    @property
    def noise_std(self) -> np.ndarray:
        """The true noise standard deviations, ``sqrt(noise_var)``, shape (n_nodes,)."""
        return np.sqrt(self.noise_var)

    @property
    def node_names(self) -> list:
        """The node names, in the column order of ``X``."""
        return [str(c) for c in self.X.columns]


def load_network(name, n_samples, random_state=None, *, interventions=None) -> NetworkData:
    """Draw ``n_samples`` rows of a bnlearn Gaussian network, with its true graph and SEM.

    Parameters
    ----------
    name : {"ecoli70", "magic-niab", "magic-irri", "arth150"}
        The network (:data:`NETWORKS`).
    n_samples : int
        Observational rows, in ``[1, colide_core.defaults.MAX_SAMPLES]`` with ``n_samples *
        n_nodes <= colide_core.defaults.MAX_CELLS``.
    random_state : int, numpy.random.SeedSequence, numpy.random.Generator or None
        The seed, split into independent streams as :func:`colide_core.data.simulate.simulate_dataset`
        splits it: the observational rows first, then (with interventions) the drawn targets, the
        shifts and the interventional rows; so the same seed gives the same observational rows
        with and without interventions.
    interventions : mapping or None, keyword-only
        Hard interventions from the true SEM, as :func:`colide_core.data.simulate.simulate_dataset`
        draws them (keys of :data:`colide_core.data.simulate.INTERVENTION_DEFAULTS`, checked by
        :func:`~colide_core.data.simulate.check_interventions`; ``targets`` as node indices in
        the order of :attr:`Network.nodes`). A target keeps its intercept and loses its parents.

    Returns
    -------
    NetworkData
        ``X`` of shape (n_rows, n_nodes), the truth (``B_true``, ``W_true``, ``intercepts``,
        ``noise_var``) and, with interventions, ``conditions``, ``targets`` and ``shifts``.

    Raises
    ------
    InvalidParameterError
        For an unknown name.
    MissingExtraError
        When the ``networks`` extra is not installed (``pip install 'colide-dashboard[networks]'``).
    ValueError
        For an invalid ``n_samples``, interventions or ``random_state``, or a file that fails
        :func:`read_network`'s checks.

    Notes
    -----
    Source of the networks: the bnlearn Bayesian network repository (Scutari), as shipped by
    ``pgmpy-no-torch`` 1.0.4; the papers are in :data:`NETWORKS`. Rows are drawn by
    :func:`colide_core.data.simulate.simulate_linear_sem` (Gaussian noise with the residual
    variances) plus the implied mean ``b (I - W)^-1``.

    Examples
    --------
    >>> data = load_network("ecoli70", 1000, random_state=0)
    >>> data.X.shape, int(data.B_true.sum())
    ((1000, 46), 70)
    >>> data = load_network("ecoli70", 200, random_state=0, interventions={"n_conditions": 2, "n_targets": 1})
    >>> data.X.shape, sorted(data.targets)
    ((600, 46), ['iv1', 'iv2', 'obs'])
    """
    from colide_core.data.simulate import (_check_n, _streams, check_interventions, simulate_conditions,
                                           simulate_linear_sem)

    net = read_network(name)
    d = len(net.nodes)
    n_samples = _check_n(n_samples, d, "n_samples")
    iv = check_interventions(interventions, d, n_samples) if interventions else {"n_conditions": 0}
    streams = _streams(random_state, 4 if iv["n_conditions"] else 1)
    noise_var = np.array(net.noise_var)
    X, _ = simulate_linear_sem(net.W, n_samples, "gaussian", noise_var=noise_var, random_state=streams[0])
    X = X + net.mean()
    spec = {"network": net.name, "n_samples": int(n_samples),
            "seed": int(random_state) if isinstance(random_state, (int, np.integer)) else None}
    conditions = targets = shifts = None
    if iv["n_conditions"]:
        X, conditions, idx_targets, shifts, iv = simulate_conditions(
            np.array(net.W), X, iv, "gaussian", noise_var, streams[1:], intercepts=net.intercepts)
        targets = {c: [net.nodes[t] for t in ts] for c, ts in idx_targets.items()}
        spec["interventions"] = {**iv, "targets": [list(t) for t in iv["targets"]]}
    return NetworkData(name=net.name, X=pd.DataFrame(X, columns=list(net.nodes)), B_true=np.array(net.B),
                       W_true=np.array(net.W), intercepts=np.array(net.intercepts), noise_var=noise_var,
                       spec=spec, conditions=conditions, targets=targets, shifts=shifts)
