"""The bnlearn repository's Gaussian networks (issue 49): read offline from the ``networks`` extra
(pgmpy-no-torch 1.0.4's JSON files, pgmpy never imported), checked, and sampled through the one
linear-SEM simulator; the Data page offers them with their truth."""
import importlib.metadata
import subprocess
import sys

import numpy as np
import pytest

from colide_core.data import networks
from colide_core.data.networks import NETWORKS, load_network, network_available, read_network
from colide_core.exceptions import InvalidParameterError, MissingExtraError

# The bnlearn repository's counts (www.bnlearn.com/bnrepository, the Gaussian networks).
COUNTS = {"ecoli70": (46, 70), "magic-niab": (44, 66), "magic-irri": (64, 102), "arth150": (107, 150)}


@pytest.fixture
def no_extra(monkeypatch):
    """As if pgmpy-no-torch were not installed (its files cached by no earlier read)."""
    real = importlib.metadata.distribution

    def missing(name):
        if name == "pgmpy-no-torch":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    networks._read_network.cache_clear()
    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    yield
    networks._read_network.cache_clear()


@pytest.mark.parametrize("name", list(COUNTS))
def test_every_network_reads_with_the_repository_counts_and_is_acyclic(name):
    import networkx as nx

    net = read_network(name)
    d, arcs = COUNTS[name]
    assert (NETWORKS[name].nodes, NETWORKS[name].arcs) == (d, arcs)
    assert len(net.nodes) == d and net.B.shape == net.W.shape == (d, d) and int(net.B.sum()) == arcs
    assert nx.is_directed_acyclic_graph(nx.from_numpy_array(net.B, create_using=nx.DiGraph))
    # every arc carries a nonzero coefficient and no coefficient lies off the arcs
    assert np.array_equal(net.W != 0, net.B != 0)
    assert np.all(net.noise_var > 0) and np.all(np.isfinite(net.intercepts))
    data = load_network(name, 300, random_state=1)
    assert data.X.shape == (300, d) and data.node_names == list(net.nodes)
    assert np.array_equal(data.B_true, net.B) and np.array_equal(data.W_true, net.W)


def test_ecoli70_weights_are_the_files_coefficients_for_hand_checked_nodes():
    # ecoli70.json: cpds["lacZ"] = {"(Intercept)": [0.2], "asnA": [-0.0161], "lacA": [1.3684],
    # "lacY": [-0.4376]}, "variance": [0.3408]; cpds["aceB"]: intercept 0.1324, icdA 1.0464,
    # variance 0.0853; cspG is a root: intercept 2.0261, variance 1.0755.
    net = read_network("ecoli70")
    i = {v: k for k, v in enumerate(net.nodes)}
    assert {net.nodes[p]: net.W[p, i["lacZ"]] for p in np.flatnonzero(net.W[:, i["lacZ"]])} == {
        "asnA": -0.0161, "lacA": 1.3684, "lacY": -0.4376}
    assert (net.intercepts[i["lacZ"]], net.noise_var[i["lacZ"]]) == (0.2, 0.3408)
    assert np.flatnonzero(net.W[:, i["aceB"]]).tolist() == [i["icdA"]] and net.W[i["icdA"], i["aceB"]] == 1.0464
    assert not net.W[:, i["cspG"]].any() and (net.intercepts[i["cspG"]], net.noise_var[i["cspG"]]) == (2.0261, 1.0755)
    # the implied moments of aceB = 0.1324 + 1.0464 icdA + z, Var z = 0.0853, by hand:
    # mu = 0.1324 + 1.0464 mu_icdA; Var = 1.0464^2 Var(icdA) + 0.0853; Cov(aceB, icdA) = 1.0464 Var(icdA)
    mu, C = net.mean(), net.covariance()
    a, c = i["aceB"], i["icdA"]
    assert mu[a] == pytest.approx(0.1324 + 1.0464 * mu[c], abs=1e-12)
    assert C[a, a] == pytest.approx(1.0464 ** 2 * C[c, c] + 0.0853, abs=1e-12)
    assert C[a, c] == pytest.approx(1.0464 * C[c, c], abs=1e-12)
    assert (mu[i["cspG"]], C[i["cspG"], i["cspG"]]) == pytest.approx((2.0261, 1.0755))


@pytest.mark.parametrize("name", ["ecoli70", "magic-irri"])
def test_sample_moments_match_the_implied_ones_at_large_n(name):
    net = read_network(name)
    n = 200_000
    X = load_network(name, n, random_state=7).X.to_numpy()
    C, mu = net.covariance(), net.mean()
    sd = np.sqrt(np.diag(C))
    # each sample covariance has standard error about sqrt((C_ii C_jj + C_ij^2) / n) <= sd_i sd_j sqrt(2 / n)
    # (0.0032 sd_i sd_j here): 6 standard errors at worst, over the d^2 entries
    assert np.all(np.abs(np.cov(X.T) - C) <= 6 * np.sqrt(2 / n) * np.outer(sd, sd))
    assert np.all(np.abs(X.mean(axis=0) - mu) <= 6 * sd / np.sqrt(n))
    # and the magic-irri scales are the source's: |w| up to 27, residual variances up to 77
    if name == "magic-irri":
        assert np.abs(net.W).max() == pytest.approx(27.0624) and net.noise_var.max() == pytest.approx(77.5444)


def test_same_seed_same_rows_and_interventions_keep_the_observational_rows():
    a = load_network("ecoli70", 500, random_state=3)
    assert a.X.equals(load_network("ecoli70", 500, random_state=3).X)
    assert not a.X.equals(load_network("ecoli70", 500, random_state=4).X)
    net = read_network("ecoli70")
    t = net.nodes.index("lacA")  # a node with parents (asnA, cspG) and children (b1583, lacY, lacZ, yaeM)
    b = load_network("ecoli70", 500, random_state=3, interventions={"targets": [[t]], "n_per_condition": 40_000})
    assert b.X.iloc[:500].equals(a.X)
    assert b.targets == {"obs": [], "iv1": ["lacA"]} and list(np.unique(b.conditions)) == ["iv1", "obs"]
    iv = b.X.iloc[500:].to_numpy()
    # do(lacA): lacA = b + z (intercept kept, parents cut) so its mean is its intercept and its variance
    # its noise variance; its parent cspG no longer moves it, its child lacZ still follows it
    assert iv[:, t].mean() == pytest.approx(net.intercepts[t], abs=6 * np.sqrt(net.noise_var[t] / 40_000))
    assert iv[:, t].var() == pytest.approx(net.noise_var[t], rel=0.05)
    assert abs(np.corrcoef(iv[:, t], iv[:, net.nodes.index("cspG")])[0, 1]) < 0.03
    assert np.corrcoef(iv[:, t], iv[:, net.nodes.index("lacZ")])[0, 1] > 0.5


def test_bad_arguments_are_refused_before_any_draw():
    with pytest.raises(InvalidParameterError, match="ecoli70"):
        load_network("alarm", 10)
    with pytest.raises(InvalidParameterError):
        load_network(["ecoli70"], 10)  # unhashable: still the same clear error
    for bad in (0, 1.5, True, "100"):
        with pytest.raises(ValueError, match="n_samples"):
            load_network("ecoli70", bad)
    with pytest.raises(ValueError, match="MAX_CELLS"):
        load_network("arth150", 10**6)


def test_without_the_extra_one_clear_error_names_it(no_extra):
    assert network_available() is False
    with pytest.raises(MissingExtraError) as err:
        load_network("ecoli70", 10)
    assert str(err.value) == ("Reading the bnlearn repository's networks needs pgmpy-no-torch, which is not "
                              "installed: pip install 'colide-dashboard[networks]'")
    assert err.value.extra == "networks" and isinstance(err.value, ImportError)


def test_reading_the_networks_never_imports_pgmpy():
    code = ("import sys; from colide_core.data.networks import load_network; "
            "[load_network(n, 10, random_state=0) for n in ('ecoli70', 'magic-niab', 'magic-irri', 'arth150')]; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pgmpy', 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
