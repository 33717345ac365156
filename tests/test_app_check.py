"""The Check page driven with streamlit.testing.v1.AppTest: on Sachs (with its ground truth) and on an
uploaded dataset without one (then with the user's own reference graph).

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes).
"""
import html
import re

import numpy as np
import pytest

import colide_core
from colide_core import checks
from colide_core.evaluation.curves import edge_score_curves

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _shown(markdown_source):
    return html.unescape(re.sub(r"\\(.)", r"\1", markdown_source))


def _frames(at, marker):
    """The st.dataframe values that have ``marker`` among their columns or index labels."""
    return [d.value for d in at.dataframe if marker in d.value.columns or marker in d.value.index]


def _app(new_app):
    at = new_app()
    at.run()
    assert not at.exception, at.exception
    return at


def test_check_page_on_sachs(new_app):
    at = _app(new_app)
    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    assert any("Learn" in i.value for i in at.info)  # nothing fitted yet
    # ... and the way there is a link to the Learn page, not only words (issue 48, the last walk's minor)
    assert "Go to Learn" in [link.proto.label for link in at.get("page_link")]
    at.session_state["learn_tab"] = "Noise"  # the EV-or-NV line's tab (only the open tab is built, issue 41)
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()  # the default Noise model, Both: Run fits EV and NV
    assert not at.exception, at.exception
    # the Learn page's noise tab carries the EV-or-NV verdict, one line per fit
    captions = [c.value for c in at.caption]
    assert any(c.startswith("NV: Noise model check") and "CoLiDE-NV fits" in c for c in captions), captions

    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    X, B = colide_core.load_sachs()
    fit = at.session_state["fit_results"]["nv"]
    A = colide_core.threshold_to_dag(fit.W, 0.3)
    expected = checks.run_checks(X, A, W=fit.W, n_random=100, n_rescale=0)
    text = " ".join(_shown(m.value) for m in at.markdown)
    assert f"**{int((A != 0).sum())} edges**" in text
    assert f"Varsortability along the learned graph is {expected.sortability.varsortability:.2f}" in text
    assert "prefer CoLiDE-NV" in text
    assert f"the data reject {expected.markov.share_rejected:.0%}" in text
    ev = _frames(at, "delta_bic_remove")[0]
    assert list(ev["source"]) == list(expected.evidence["source"])
    np.testing.assert_allclose(ev["delta_bic_remove"], expected.evidence["delta_bic_remove"])
    curves = _frames(at, "AUROC")[0]
    assert curves.loc["AUROC", "NV"] == pytest.approx(edge_score_curves(B, fit.W).auroc)
    assert "Download the report (HTML)" in [b.label for b in at.get("download_button")]
    # Streamlit's own table export is off (client.disableDataExport): these tables offer ours (to_csv_safe)
    assert {"Residuals (CSV)", "Markov tests (CSV)"} <= {b.label for b in at.get("download_button")}
    # one click: standardise and refit, random rescalings
    at.button(key="check_refit").click().run()
    assert not at.exception, at.exception
    std = _frames(at, "status")[0]
    assert set(std["status"]) <= {"kept", "reversed", "removed", "added"} and len(std) >= int((A != 0).sum())
    assert any("random rescalings" in _shown(m.value) for m in at.markdown)


def test_check_page_on_an_upload_without_truth_then_with_a_reference(new_app):
    rng = np.random.default_rng(1)
    n = 300
    X = rng.standard_normal((n, 4))
    X[:, 1] += X[:, 0]
    X[:, 2] += X[:, 1]
    names = ["a<b>", "b*", "c", "d"]
    body = "\n".join(",".join(f"{v:.6f}" for v in row) for row in X)
    at = _app(new_app)
    at.file_uploader(key="data_upload").set_value(("mine.csv", (",".join(names) + "\n" + body).encode(), "text/csv"))
    at.run()
    assert not at.exception, at.exception
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()
    assert not at.exception, at.exception
    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    assert any("No ground truth" in i.value for i in at.info)
    assert not _frames(at, "AUROC")
    # without truth: the lambda path with its stable region
    at.button(key="check_path_run").click().run()
    assert not at.exception, at.exception
    assert any("largest plateau" in _shown(m.value) for m in at.markdown)
    # a reference naming an unknown node: a clear error, nothing used
    at.file_uploader(key="check_ref_upload").set_value(("ref.csv", b"source,target\na<b>,zz\n", "text/csv"))
    at.run()
    assert not at.exception, at.exception
    assert any("'zz'" in _shown(e.value) for e in at.error)
    # a good one (DAGitty): the curves appear, marked "against your reference"
    model = 'dag { "a<b>" -> "b*" -> c }'.encode()
    at.file_uploader(key="check_ref_upload").set_value(("model.txt", model, "text/plain"))
    at.run()
    assert not at.exception, at.exception
    assert any("Against **your reference** (2 edges)" in m.value for m in at.markdown)
    curves = _frames(at, "AUROC")[0]
    fit = at.session_state["fit_results"]["nv"]
    truth = np.zeros((4, 4))
    truth[0, 1] = truth[1, 2] = 1
    assert curves.loc["AUROC", "NV"] == pytest.approx(edge_score_curves(truth, fit.W).auroc)
    assert all("<b>" not in m.value for m in at.markdown)
