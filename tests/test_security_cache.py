"""Issue 22, class 3: cached artefacts shared across sessions.

Every ``st.cache_data`` entry is shared by all sessions of the server, so a key that leaves out
part of the output lets one session change what another one sees or downloads. These tests
build inputs that collided in a cache key before the fix (same key, different output) and
check that they now get different keys and each session its own output.
"""
import ast
import json

import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core.run.manifest import build_manifest, data_fingerprint, manifest_to_json
from dashboard import fitting, manifests
from dashboard.caching import cached
from dashboard.data import content_hash, make_dataset, sachs_dataset

from tests._schedules import QUICK  # noqa: E402 - the suite's short schedule

pytestmark = [pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning"),
              pytest.mark.usefixtures("fresh_caches")]


def _frame(columns, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.normal(size=(30, len(columns))), columns=columns)


# --- content_hash / data_fingerprint: one unambiguous hash ---------------------------------------

def test_column_names_holding_the_old_separator_no_longer_collide():
    # Joined with "\x1f", both name lists read "a\x1fb\x1fc": same values, same key before the fix.
    one, two = _frame(["a\x1fb", "c"]), _frame(["a", "b\x1fc"])
    assert content_hash(one) != content_hash(two)
    assert make_dataset("one", one).key != make_dataset("two", two).key
    # The manifest fingerprint (the same digest) tells them apart too.
    assert data_fingerprint(one)["sha256"] != data_fingerprint(two)["sha256"]


@pytest.mark.parametrize("names", [
    (["a|b", "c"], ["a", "b|c"]),
    (['a"', "b"], ['a', '"b']),
    (["a, b", "c"], ["a", " b, c"]),
    (["x\n", "y"], ["x", "\ny"]),
])
def test_names_with_separators_or_quotes_give_different_hashes(names):
    assert content_hash(_frame(names[0])) != content_hash(_frame(names[1]))


def test_ground_truth_and_sigma_are_not_confused_with_each_other():
    X = _frame(["a", "b"])
    B = np.array([[0.0, 1.0], [0.0, 0.0]])
    assert content_hash(X, B_true=B) != content_hash(X)
    # Four values as a 2 x 2 truth or a second data block: the header states every shape.
    assert content_hash(X, sigma_true=np.array([1.0, 2.0])) != content_hash(X, B_true=None, sigma_true=None)
    assert content_hash(X, B_true=B) != content_hash(X, sigma_true=np.array([0.0, 1.0]))


def test_one_hash_implementation_serves_both_and_manifest_fingerprints_are_unchanged():
    # data_fingerprint is digest("colide-data/1", [n, d, columns], [X]): the bytes hashed are
    # those of the fingerprints already stored in manifests, so old manifests still match.
    import hashlib

    from colide_core.hashing import canonical_json, digest

    X = _frame(['a"b', "é", "x\n"])
    values = X.to_numpy(dtype=float)
    old = hashlib.sha256()
    old.update(b"colide-data/1")
    old.update(json.dumps([30, 3, ['a"b', "é", "x\n"]], sort_keys=True).encode())
    old.update(np.ascontiguousarray(values, dtype="<f8").tobytes())
    assert data_fingerprint(X)["sha256"] == old.hexdigest()
    assert digest("colide-data/1", [30, 3, list(X.columns)], [values]) == old.hexdigest()
    assert canonical_json({"b": 1, "a": ["x"]}) == '{"a": ["x"], "b": 1}'


def test_fingerprint_tags_every_container_so_nothing_imitates_an_array():
    from colide_core.hashing import digest, fingerprint

    A = np.arange(4.0)
    described = ["ndarray", [4], "<f8", __import__("hashlib").sha256(A.tobytes()).hexdigest()]
    assert fingerprint("t", A) != fingerprint("t", described)
    assert fingerprint("t", [1, 2]) == fingerprint("t", (1, 2))
    assert fingerprint("t", {"a": 1}) != fingerprint("t", [["a", 1]])
    assert fingerprint("t", 1) != fingerprint("t", 1.0) != fingerprint("t", True)
    with pytest.raises(TypeError):
        fingerprint("t", object())
    with pytest.raises(ValueError):
        digest("bad tag[", [])


# --- the cached fit: node names of another dataset -----------------------------------------------

def test_names_that_collided_in_the_old_key_get_different_keys_and_never_reach_a_cached_fit():
    # Joined with "\x1f", ["a\x1fb", "c"] and ["a", "b\x1fc"] gave the same key on main, so the
    # cached fit of one was served for the other. The key now tells them apart, and the name
    # policy (no control characters, docs/security.md) refuses such names before any fit.
    one = make_dataset("one.csv", _frame(["a\x1fb", "c"]))
    two = make_dataset("two.csv", _frame(["a", "b\x1fc"]))
    assert one.key != two.key
    params = fitting.solver_params("nv", 0.05, QUICK)
    for ds in (one, two):
        with pytest.raises(ValueError, match="control character"):
            fitting.fit_colide(ds.key, params, ds.X)


# --- the manifest download -------------------------------------------------------------------------

def _record(W, ds, params, n_iter=5000):
    result = colide_core.SolverResult(W=np.asarray(W, dtype=float), sigma=np.ones(ds.shape[1]), n_iter=n_iter,
                                      n_iter_per_stage=(n_iter,), history={"objective": [1.0]}, objective=1.0,
                                      converged=True, stopped=False)
    return fitting.FitResult(result=result, variant="nv", params=params, data_key=ds.key,
                             node_names=list(ds.node_names), fit_time=0.1)


def test_manifest_json_key_covers_w_sigma_and_the_dataset_name():
    ds = make_dataset("mine.csv", _frame(["a", "b", "c"]))
    theirs = make_dataset("someone-elses-secret.csv", ds.X)   # same numbers, other file name
    assert theirs.key == ds.key
    params = fitting.solver_params("nv", 0.05, QUICK)
    honest = _record(np.zeros((3, 3)), ds, params)
    forged = _record(np.array([[0, 0.9, 0], [0, 0, 0.8], [0, 0, 0]]), ds, params)
    # Everything the old key held (data key, params, threshold, n_iter, stopped) is equal.
    assert (honest.data_key, honest.params, honest.n_iter, honest.stopped) == \
        (forged.data_key, forged.params, forged.n_iter, forged.stopped)
    a = json.loads(manifests.fit_manifest_json(forged, theirs, 0.3))
    b = json.loads(manifests.fit_manifest_json(honest, ds, 0.3))
    assert np.array_equal(np.array(a["results"]["W"]), forged.W)
    assert np.array_equal(np.array(b["results"]["W"]), honest.W)
    assert a["data"]["source"] == "someone-elses-secret.csv" and b["data"]["source"] == "mine.csv"
    # sigma is part of the key too
    import dataclasses

    other_sigma = fitting.FitResult(result=dataclasses.replace(honest.result, sigma=np.full(3, 2.0)),
                                    variant="nv", params=params, data_key=ds.key, node_names=list(ds.node_names),
                                    fit_time=0.1)
    c = json.loads(manifests.fit_manifest_json(other_sigma, ds, 0.3))
    assert c["results"]["sigma"] == [2.0, 2.0, 2.0]
    assert honest.content_key != forged.content_key != other_sigma.content_key


def _learn_page(new_app):
    at = new_app().run()
    at.session_state["learn_tab"] = "Downloads"  # the manifests' tab (only the open tab is built, issue 41)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    return at


#: The Learn page's manifest download for NV on Sachs at λ = 0.05 and threshold 0.3 (its name says
#: dataset, noise model, λ and threshold).
NV_MANIFEST = "colide_Sachs_consensus17_nv_lambda0.05_thr0.3_manifest.json"


def test_a_manifest_loaded_in_one_session_never_reaches_another_sessions_download(downloads, new_app):
    ds = sachs_dataset()
    # Session A loads a manifest with the settings and iteration count of an honest fit but a
    # W of its own and a file name of its own.
    model = colide_core.CoLiDE("nv", **QUICK).fit(ds.X)
    doc = json.loads(manifest_to_json(build_manifest(model, ds.X, data_source="patients-of-A.csv")))
    forged = np.full(model.W_.shape, 0.77)
    np.fill_diagonal(forged, 0.0)
    doc["results"]["W"] = forged.tolist()
    a = _learn_page(new_app)
    a.file_uploader(key="learn_manifest_upload").set_value(("a.json", json.dumps(doc).encode(), "application/json"))
    a.run()
    assert not a.exception, a.exception
    assert np.array_equal(a.session_state["fit_results"]["nv"].W, forged)
    assert np.array_equal(np.array(json.loads(downloads[NV_MANIFEST][-1])["results"]["W"]), forged)

    # Session B fits the same data with the same settings: its download holds its own W.
    b = _learn_page(new_app)
    b.session_state["solver_overrides"] = dict(QUICK)
    b.button(key="learn_run").click().run()
    assert not b.exception, b.exception
    mine = b.session_state["fit_results"]["nv"]
    assert mine.n_iter == model.n_iter_ and np.array_equal(mine.W, model.W_)
    got = json.loads(downloads[NV_MANIFEST][-1])
    assert np.array_equal(np.array(got["results"]["W"]), model.W_)
    assert not np.array_equal(np.array(got["results"]["W"]), forged)
    assert got["data"]["source"] != "patients-of-A.csv"


# --- the caching policy itself ---------------------------------------------------------------------

def test_arrays_and_frames_are_hashed_in_full_not_sampled():
    # Streamlit hashes arrays of >= 500,000 values from a sample of 100,000 of them.
    a = np.zeros(600_000)
    b = a.copy()
    b[123_457] = 1.0
    assert cached.HASH_FUNCS[np.ndarray](a) != cached.HASH_FUNCS[np.ndarray](b)
    f = pd.DataFrame({"x": np.zeros(60_000)})
    g = f.copy()
    g.iloc[31_337, 0] = 1.0
    assert cached.HASH_FUNCS[pd.DataFrame](f) != cached.HASH_FUNCS[pd.DataFrame](g)

    calls = []

    @cached.cache_data(max_entries=4)
    def total(A):
        calls.append(1)
        return float(A.sum())

    try:
        assert (total(a), total(b), total(a)) == (0.0, 1.0, 0.0) and len(calls) == 2
    finally:
        total.clear()


def test_cache_data_refuses_an_unexplained_underscore_parameter():
    with pytest.raises(TypeError, match="_secret"):
        @cached.cache_data()
        def f(x, _secret):
            return x

    @cached.cache_data(unhashed={"_cb": "only reports progress"})
    def g(x, _cb=None):
        return x

    assert g(3) == 3
    g.clear()


def _cached_functions(root):
    """(file, function name, decorator source, parameter names) of every cached function."""
    found = []
    for path in sorted([*root.glob("dashboard/**/*.py"), *root.glob("pages/*.py"), root / "app.py"]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for dec in node.decorator_list:
                text = ast.unparse(dec)
                if "cache_data" in text or "cache_resource" in text:
                    args = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
                    found.append((path.relative_to(root).as_posix(), node.name, text, args))
    return found


def test_every_cached_function_keys_on_all_it_reads(repo_root):
    found = _cached_functions(repo_root)
    names = {(f, n) for f, n, _, _ in found}
    # The audited list: a new cached function must be reviewed and added here.
    assert names == {
        ("dashboard/caching/cached.py", "graph_html_cached"),      # all inputs hashed in full
        ("dashboard/caching/cached.py", "graph_drawing_cached"),   # all inputs hashed in full (the long-lived drawing's data)
        ("dashboard/caching/cached.py", "playback_html_cached"),   # all inputs hashed in full (W per checkpoint)
        ("dashboard/fitting.py", "fit_colide"),             # _X: data_key is its content hash
        ("dashboard/manifests.py", "fit_manifest_json"),    # record, dataset and threshold hashed
        ("dashboard/infra/state/__init__.py", "sachs"),           # no input: the bundled file
        ("dashboard/comparison.py", "run_store"),           # no input: rows keyed by run_key
        ("dashboard/checks.py", "run_checks_cached"),       # _X: data_key; A, W, frequency hashed
        ("dashboard/checks.py", "ev_nv_line"),              # _X: data_key; A hashed
        ("dashboard/checks.py", "path_cached"),             # _X: data_key; λ-path settings hashed
        ("dashboard/caching/cached.py", "_condition_summary"),     # _dataset: key is its content hash (rows, conditions, targets)
        ("dashboard/data.py", "_data_as_fitted"),          # _dataset: key (rows, conditions, targets); name, column hashed
        ("dashboard/fitting.py", "topo_cost"),              # _X: data_key is its content hash; settings hashed
        ("dashboard/caching/cached.py", "cached_network_dataset"), # name, n, seed, n_conditions: all it reads (the network's file is fixed)
        ("dashboard/caching/cached.py", "cached_network_summary"), # no input: the installed networks' files
        ("dashboard/infra/state/predict.py", "scale_verdict_of"),  # dataset (X, transforms) and A hashed
        ("dashboard/infra/state/predict.py", "ges_cpdag_of"),   # _conditions: the dataset's key covers its labels
    }, names
    for path, name, decorator, args in found:
        hidden = [a for a in args if a.startswith("_")]
        if decorator.startswith("st."):
            assert not hidden, f"{path}:{name} uses st.cache_* with unhashed parameters {hidden}"
        else:
            assert decorator.startswith("cache_data") or decorator.startswith("cached.cache_data"), decorator
    # the design travels as one Design (issue 47): no loose _conditions / _targets any more
    assert cached.UNHASHED["dashboard.fitting.fit_colide"].keys() == {"_X", "_callback", "_design"}
    assert cached.UNHASHED["dashboard.manifests.fit_manifest_json"] == {}
    # the Check page's cached functions take the dataset's Design (issue 47) as _design, unhashed because
    # data_key, the dataset's content hash, covers the labels and targets it is built from
    import dashboard.checks  # noqa: F401 - registers its cached functions in cached.UNHASHED

    for name, allowed in (("run_checks_cached", {"_X", "_design", "_callback"}), ("ev_nv_line", {"_X", "_design"}),
                          ("path_cached", {"_X", "_design", "_callback"})):
        unhashed = cached.UNHASHED[f"dashboard.checks.{name}"]
        assert unhashed.keys() == allowed, name
        assert "Design" in unhashed["_design"] and "data_key" in unhashed["_design"], name


def test_the_dataset_key_covers_its_conditions_and_targets():
    # fit_colide is cached on the dataset key only (its conditions and targets are not hashed by
    # Streamlit): the same rows with other conditions or targets must have another key.
    import numpy as np
    import pandas as pd

    from dashboard.data import make_dataset

    X = pd.DataFrame(np.arange(12.0).reshape(6, 2), columns=["a", "b"])
    plain = make_dataset("d", X)
    two = make_dataset("d", X, meta={"conditions": ["x"] * 3 + ["y"] * 3})
    other = make_dataset("d", X, meta={"conditions": ["x"] * 2 + ["y"] * 4})
    targeted = make_dataset("d", X, meta={"conditions": ["x"] * 3 + ["y"] * 3, "targets": {"y": ["a"]}})
    assert len({plain.key, two.key, other.key, targeted.key}) == 4
    # so the view of a dataset that cached functions hash leaves the labels to the key (issue 42)
    from dashboard.caching.cached import dataset_cache_key

    assert len({dataset_cache_key(ds) for ds in (plain, two, other, targeted)}) == 4
    assert make_dataset("d", X).key == plain.key  # data without conditions keep the key they had
