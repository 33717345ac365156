"""A Learn rerun does not hash the per-row condition labels again, nor rebuild the data file (issue 42, low).

On nine-condition Sachs (7,466 labels) every rerun of the Downloads tab hashed the labels twice
(``dashboard.caching.cached.dataset_cache_key``, the cache key of each fit's manifest: about 6 ms a call)
and rebuilt the "Data as fitted" CSV (``data_as_fitted``: about 0.1 s). Measured on a 2-core box:
the tab's rerun 307 -> 150 ms. The labels are hashed once, into the dataset's content hash
(``Dataset.key``), which keys both now.
"""
import pytest

import colide_core.graph.export
import colide_core.hashing
from tests._app_sachs import sachs_all_app

pytestmark = pytest.mark.usefixtures("fresh_caches")


def test_a_learn_rerun_hashes_no_condition_label_and_builds_no_data_file(new_app, monkeypatch):
    at, rec = sachs_all_app(new_app, "pages/learn.py")
    at.button(key="learn_run").click().run()
    at.session_state["learn_tab"] = "Downloads"
    at.run()
    assert not at.exception, at.exception
    labels = at.session_state["dataset"].meta["conditions"]
    assert len(labels) == len(rec.X) == 7466
    assert "Data as fitted (CSV)" in [b.label for b in at.get("download_button")]

    hashed, written = [], []
    real_canonical, real_csv = colide_core.hashing.canonical, colide_core.graph.export.to_csv_safe

    def canonical(obj):
        if obj is labels or (isinstance(obj, (list, tuple)) and len(obj) == len(labels)):
            hashed.append(len(obj))
        return real_canonical(obj)

    def to_csv_safe(df, *args, **kwargs):
        if len(df) == len(labels):
            written.append(df.shape)
        return real_csv(df, *args, **kwargs)

    monkeypatch.setattr(colide_core.hashing, "canonical", canonical)
    monkeypatch.setattr(colide_core.graph.export, "to_csv_safe", to_csv_safe)
    for _ in range(2):
        at.run()
        assert not at.exception, at.exception
        assert "Data as fitted (CSV)" in [b.label for b in at.get("download_button")]
    assert hashed == [] and written == []
    # the Check page names the same file without building it
    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    assert hashed == [] and written == []
