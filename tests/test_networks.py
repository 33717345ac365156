"""The bnlearn repository's Gaussian networks (issue 49): read offline from the ``networks`` extra
(pgmpy-no-torch 1.0.4's JSON files, pgmpy never imported), checked, and sampled through the one
linear-SEM simulator; the Data page offers them with their truth."""
import subprocess
import sys

import numpy as np
import pytest

from colide_core.data.networks import NETWORKS, load_network, network_available, read_network
from colide_core.exceptions import InvalidParameterError, MissingExtraError

# The bnlearn repository's counts (www.bnlearn.com/bnrepository, the Gaussian networks).
COUNTS = {"ecoli70": (46, 70), "magic-niab": (44, 66), "magic-irri": (64, 102), "arth150": (107, 150)}


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


def test_the_files_variance_field_is_a_variance_not_a_standard_deviation():
    # magic-irri's root markers (G + digits, no parents) are rice RIL genotypes coded 0/2: a node
    # with mean b is 2 with probability p = b / 2, so its variance is E[x^2] - b^2 = 2b - b^2 =
    # b(2 - b) and its sd sqrt(b(2 - b)). bn.fit keeps the sd (sample, n - 1), so if the field were
    # that sd, v / b(2 - b) would run from 1 (b near 1) up to 1 / sqrt(b(2 - b)), 2.2 for G2764
    # (b = 0.1122). Read as a variance it is b(2 - b) n / (n - 1): 1.0007-1.0014 on all 33 roots
    # (n about 1,100 lines). So the field is a variance and load_network uses it as one.
    net = read_network("magic-irri")
    roots = [j for j, v in enumerate(net.nodes) if v[0] == "G" and v[1:].isdigit() and not net.B[:, j].any()]
    assert len(roots) == 33
    b, v = net.intercepts[roots], net.noise_var[roots]
    ratio = v / (b * (2 - b))
    assert ratio.min() > 1.0 and ratio.max() < 1.002
    g = net.nodes.index("G2764")
    assert (net.intercepts[g], net.noise_var[g]) == (0.1122, 0.2121)
    assert np.sqrt(0.1122 * (2 - 0.1122)) == pytest.approx(0.4602, abs=1e-4)  # the sd: not what the file holds
    # and the draws use it as a variance: a root's sample variance at n = 20,000 is v (4.5 SE: 2 v^2 / n)
    X = load_network("magic-irri", 20_000, random_state=2).X.to_numpy()
    assert X[:, g].var(ddof=1) == pytest.approx(0.2121, abs=4.5 * 0.2121 * np.sqrt(2 / 20_000))


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


# --- the Data page -----------------------------------------------------------------------------

@pytest.mark.usefixtures("fresh_caches")
def test_data_page_loads_a_network_with_its_truth_and_learn_scores_against_it(new_app):
    import colide_core
    from colide_core import threshold_to_dag

    at = new_app()
    at.run()
    assert not at.exception, at.exception
    # the four networks' table: sizes from the repository, and how far each one's variances follow its order
    table = next(df.value for df in at.dataframe if "varsortability" in getattr(df.value, "columns", []))
    assert table["nodes"].to_dict() == {k: v[0] for k, v in COUNTS.items()}
    assert table["arcs"].to_dict() == {k: v[1] for k, v in COUNTS.items()}
    assert table.loc["ecoli70", "varsortability"] == round(read_network("ecoli70").varsortability(), 2)
    assert any("not validated causal truths" in c.value for c in at.caption)
    at.number_input(key="data_net_n").set_value(500).run()
    at.number_input(key="data_net_seed").set_value(2).run()
    at.button(key="data_use_network").click().run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    data = load_network("ecoli70", 500, random_state=2)
    assert ds.source == "network" and ds.shape == (500, 46) and ds.node_names == data.node_names
    assert np.array_equal(ds.X.to_numpy(), data.X.to_numpy()) and int(ds.B_true.to_numpy().sum()) == 70
    np.testing.assert_array_equal(ds.sigma_true, np.sqrt(read_network("ecoli70").noise_var))
    assert at.metric[2].value == "yes" and at.metric[3].value == "bnlearn network"

    at.session_state["learn_variant"] = "NV"
    at.session_state["learn_tab"] = "Metrics"  # only the open tab is built
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    res = at.session_state["fit_results"]["nv"]
    assert res.W.shape == (46, 46)
    # the page scores its fit against the network's 70 arcs (whatever solver the live page used)
    shd = colide_core.evaluate(data.B_true, threshold_to_dag(res.W, 0.3))["shd"]
    assert int(next(m.value for m in at.metric if m.label == "SHD · NV")) == shd
    assert any("truth: the 70 arcs of bnlearn's ecoli70" in c.value for c in at.caption)


@pytest.mark.usefixtures("fresh_caches")
def test_data_page_without_the_extra_says_how_to_get_the_networks(new_app, no_extra):
    at = new_app()
    at.run()
    assert not at.exception, at.exception
    infos = " ".join(i.value for i in at.info)
    assert "pip install 'colide-dashboard[networks]'" in infos
    assert not [b for b in at.button if b.key == "data_use_network"]
    assert at.session_state["dataset"].source == "sachs"  # the default data are untouched


# --- a link to a network -----------------------------------------------------------------------

def test_a_link_carries_a_network_and_refuses_what_a_link_may_not_start():
    from dashboard.data import network_dataset
    from dashboard.infra.urlstate import parse_view, view_params

    ds = network_dataset("magic-niab", 400, 5, n_conditions=2)
    ss = {"learn_lambda1": 0.05, "learn_threshold": 0.3, "learn_variant": "NV", "learn_layout": "Circle"}
    params = view_params(ds, ss)
    assert {k: params[k] for k in ("data", "net", "n", "seed", "iv")} == {
        "data": "net", "net": "magic-niab", "n": "400", "seed": "5", "iv": "2"}
    view = parse_view(params)
    assert (view.data, view.sim, view.problems) == ("net", {"net": "magic-niab", "n": 400, "seed": 5, "iv": 2}, [])
    # hostile or wrong parameters are named and ignored, never raised
    bad = parse_view({"data": "net", "net": "alarm", "n": "1e9", "seed": "-1"})
    assert bad.data is None and bad.problems == [
        "net: not one of ecoli70, magic-niab, magic-irri, arth150", "net: missing (one of ecoli70, magic-niab, "
        "magic-irri, arth150)"]
    view = parse_view({"data": "net", "net": "arth150", "n": "1e9", "seed": "x"})
    assert view.sim == {"net": "arth150", "n": 1000, "seed": 0, "iv": 0}
    assert view.problems == ["n: outside [10, 200000]", "seed: not a number"]


@pytest.mark.usefixtures("fresh_caches")
def test_opening_a_network_link_loads_it_and_a_large_one_is_refused(new_app):
    at = new_app()
    at.query_params = {"data": "net", "net": "ecoli70", "n": "300", "seed": "4", "model": "NV"}
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    assert ds.source == "network" and ds.shape == (300, 46) and ds.meta["seed"] == 4
    assert at.session_state["data_net_n"] == 300  # the Data page's selectors follow the link
    assert at.query_params["net"] in ("ecoli70", ["ecoli70"])  # and the page writes it back

    at = new_app()
    at.query_params = {"data": "net", "net": "arth150", "n": "100000", "model": "NV"}  # 10.7 M values
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    assert at.session_state["dataset"].source == "sachs"
    shown = " ".join(m.value for m in list(at.warning) + list(at.info) + list(at.error))
    assert "more than a link may start" in shown, shown
