"""Column transforms (colide_core.data.transforms), their record in the run manifest, the CLI's
``fit --transform`` and the Data page's Transform block."""
import json

import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core.run.manifest import ManifestError, data_fingerprint, load_manifest, manifest_from_result
from colide_core.data.transforms import ASINH_COFACTOR, check_steps, transform_columns, transform_step


def test_log_on_hand_made_numbers():
    X = pd.DataFrame({"a": [1.0, np.e, np.e ** 2], "b": [10.0, 100.0, 1000.0]})
    before = X.copy()
    Z = transform_columns(X, "log")
    np.testing.assert_allclose(Z["a"], [0.0, 1.0, 2.0], atol=1e-15)
    np.testing.assert_allclose(Z["b"], np.log(10) * np.array([1.0, 2.0, 3.0]))
    assert list(Z.columns) == ["a", "b"] and Z is not X
    pd.testing.assert_frame_equal(X, before)  # the caller's frame is not modified


def test_log_refuses_zero_and_negative_values_naming_the_columns():
    X = pd.DataFrame({"ok": [1.0, 2.0], "zero": [0.0, 3.0], "neg": [-2.0, 4.0]})
    with pytest.raises(ValueError, match=r"'zero' \(min 0\), 'neg' \(min -2\).*asinh"):
        transform_columns(X, "log")


def test_asinh_on_hand_made_numbers():
    # asinh(x / c) = log(x/c + sqrt((x/c)^2 + 1)): asinh(0) = 0, asinh(5/5) = log(1 + sqrt 2),
    # asinh(-150/150) = -log(1 + sqrt 2); odd, so negative values are fine.
    X = np.array([[0.0, 150.0], [5.0, -150.0]])
    Z = transform_columns(X, "asinh")  # default cofactor 5
    assert ASINH_COFACTOR == 5.0
    np.testing.assert_allclose(Z[:, 0], [0.0, np.log(1 + np.sqrt(2))])
    np.testing.assert_allclose(transform_columns(X, "asinh", cofactor=150.0)[:, 1],
                               [np.log(1 + np.sqrt(2)), -np.log(1 + np.sqrt(2))])
    assert X[1, 1] == -150.0  # not modified
    with pytest.raises(ValueError, match="cofactor"):
        transform_columns(X, "asinh", cofactor=0.0)
    with pytest.raises(ValueError, match="asinh transform only"):
        transform_columns(X, "log", cofactor=5.0)


def test_standardise_is_a_population_z_score():
    # column [1, 2, 3]: mean 2, population sd sqrt(2/3) -> [-1, 0, 1] / sqrt(2/3)
    X = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [10.0, 10.0, 40.0]})
    Z = transform_columns(X, "standardise")
    np.testing.assert_allclose(Z["x"], np.array([-1.0, 0.0, 1.0]) / np.sqrt(2 / 3))
    # y: mean 20, deviations -10, -10, 20, population sd sqrt(200) -> [-1, -1, 2] / sqrt(2)
    np.testing.assert_allclose(Z["y"], np.array([-1.0, -1.0, 2.0]) / np.sqrt(2))
    np.testing.assert_allclose(Z.to_numpy().std(axis=0, ddof=0), 1.0)
    with pytest.raises(ValueError, match="constant column.*'c'"):
        transform_columns(pd.DataFrame({"c": [1.0, 1.0], "x": [1.0, 2.0]}), "standardize")


def test_unknown_kind_and_bad_steps():
    with pytest.raises(ValueError, match="log, asinh, standardize"):
        transform_columns(np.ones((2, 2)), "sqrt")
    assert check_steps([{"kind": "asinh", "cofactor": 150}]) == [{"kind": "asinh", "cofactor": 150.0}]
    for bad in ([{"kind": "asinh", "cofactor": "5"}], [{"kind": "log", "x": 1}], "log", [{"kind": None}]):
        with pytest.raises(ValueError):
            check_steps(bad)


def _sachs_asinh():
    from dashboard.data import sachs_dataset, transformed_dataset

    raw = sachs_dataset()
    return raw, transformed_dataset(raw, "asinh")


def test_transformed_dataset_is_new_keeps_truth_and_records_the_step():
    raw, ds = _sachs_asinh()
    assert ds.key != raw.key and ds.meta["transform"] == [{"kind": "asinh", "cofactor": 5.0}]
    assert "asinh(x/5)" in ds.name and ds.source == raw.source
    np.testing.assert_array_equal(ds.B_true.to_numpy(), raw.B_true.to_numpy())
    np.testing.assert_allclose(ds.X.to_numpy(), np.arcsinh(raw.X.to_numpy() / 5.0))
    assert "transform" not in raw.meta  # the raw dataset is untouched
    from dashboard.data import transformed_dataset

    both = transformed_dataset(ds, "standardize")
    assert [s["kind"] for s in both.meta["transform"]] == ["asinh", "standardize"]


def test_manifest_records_the_transform_and_matches_the_transformed_data():
    from dashboard.manifests import fit_manifest
    from dashboard.fitting import FitResult

    raw, ds = _sachs_asinh()
    model = colide_core.CoLiDE("nv", max_iter=(200, 200, 200, 200)).fit(ds.X)
    manifest = colide_core.run.manifest.build_manifest(model, ds.X, transform=ds.meta["transform"])
    assert manifest["transform"] == [{"kind": "asinh", "cofactor": 5.0}]
    m = load_manifest(json.dumps(manifest).encode())
    assert m.transform == [{"kind": "asinh", "cofactor": 5.0}]
    assert m.data["sha256"] == data_fingerprint(ds.X)["sha256"] != data_fingerprint(raw.X)["sha256"]
    m.check_data(ds.X)
    with pytest.raises(ManifestError, match="differ"):
        m.check_data(raw.X)
    # the dashboard's manifest (Learn page download) carries the dataset's transform too
    res = FitResult(result=model.result_, variant="nv", params=model.get_params(), data_key=ds.key,
                    node_names=ds.node_names, fit_time=0.0)
    dash = fit_manifest(res, ds, 0.3)
    assert dash["transform"] == ds.meta["transform"]
    assert fit_manifest(res, raw, 0.3)["transform"] == []
    # on the raw data, the Learn page's loader says which transform to apply first
    from dashboard.manifests import DataMismatch, run_from_manifest

    with pytest.raises(DataMismatch, match=r"apply the manifest's transform there: asinh\(x/5\)"):
        run_from_manifest(json.dumps(dash).encode(), raw)
    assert run_from_manifest(json.dumps(dash).encode(), ds).result.data_key == ds.key
    # a malformed transform is refused on load
    bad = dict(manifest, transform=[{"kind": "sqrt"}])
    with pytest.raises(ManifestError, match="transform"):
        load_manifest(json.dumps(bad).encode())


def test_cli_fit_transform(tmp_path):
    from colide_core.run.cli import main

    X = pd.DataFrame(np.random.default_rng(0).lognormal(size=(60, 3)), columns=["a", "b", "c"])
    X.to_csv(tmp_path / "d.csv", index=False)
    rc = main(["fit", str(tmp_path / "d.csv"), "--out", str(tmp_path / "o"), "--transform", "asinh",
               "--cofactor", "150", "--quiet", "--max-iter", "100,100,100,100"])
    assert rc == 0
    m = load_manifest(tmp_path / "o" / "manifest.json")
    assert m.transform == [{"kind": "asinh", "cofactor": 150.0}]
    m.check_data(pd.DataFrame(np.arcsinh(X.to_numpy() / 150.0), columns=list(X.columns)))
    with pytest.raises(SystemExit) as exc:  # argparse refuses an unknown transform
        main(["fit", str(tmp_path / "d.csv"), "--out", str(tmp_path / "p"), "--transform", "sqrt"])
    assert exc.value.code == 2
    Xn = X.copy()
    Xn.iloc[0, 1] = -1.0
    Xn.to_csv(tmp_path / "n.csv", index=False)
    with pytest.raises(SystemExit) as exc:  # log of a negative value: one-line error, exit 2, nothing written
        main(["fit", str(tmp_path / "n.csv"), "--out", str(tmp_path / "q"), "--transform", "log", "--quiet"])
    assert exc.value.code == 2
    assert not (tmp_path / "q" / "manifest.json").exists()


def test_data_page_applies_asinh_on_sachs(new_app):
    at = new_app(timeout=120)
    at.run()
    at.switch_page("pages/data.py").run()
    assert not at.exception, at.exception
    raw_key = at.session_state["dataset"].key
    at.radio(key="data_xform_kind").set_value("asinh").run()
    at.number_input(key="data_xform_cofactor").set_value(5.0).run()
    at.button(key="data_xform_apply").click().run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    assert ds.key != raw_key and ds.meta["transform"] == [{"kind": "asinh", "cofactor": 5.0}]
    assert ds.B_true is not None and ds.shape == (853, 11)
    assert any("Applied" in s.value for s in at.success)
    assert any("asinh" in h.value for h in at.subheader)
    assert any("not** scale-invariant" in c.value for c in at.caption)
    # log on Sachs (all intensities > 0) works; log again (asinh values of x<5 are <1 -> log < 0,
    # then log of negatives) is refused with the column named and the dataset kept
    at.radio(key="data_xform_kind").set_value("standardize").run()
    at.button(key="data_xform_apply").click().run()
    at.radio(key="data_xform_kind").set_value("log").run()
    at.button(key="data_xform_apply").click().run()
    assert not at.exception, at.exception
    assert any("not applied" in e.value and "Raf" in e.value for e in at.error)
    assert [s["kind"] for s in at.session_state["dataset"].meta["transform"]] == ["asinh", "standardize"]
