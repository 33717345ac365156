"""Issue 30, the low findings this file covers, each with a test that fails on the code before the fix:

* ``report --manifest`` refitted 1 + ``--rescalings`` times with the manifest's unbounded settings:
  now the refits run only within the dashboard's limits (``colide_core.settings.INTERACTIVE``),
  else they are skipped with a warning (and the help says what is refitted);
* a column with one bad cell ("0x10") among numbers was reported with a valid value as its
  example: the example is now the bad cell;
* a 10,000-column upload was parsed in full before it was refused for having more than 200 nodes:
  the header is counted first (``dashboard.data.UPLOAD_MAX_COLUMNS``);
* a 1.5 MB quoted DAGitty attribute cost about 300 MB in the tokeniser's regex: now O(1) beyond the text;
* ``[bench].out`` could leave the config's folder through a symbolic link: the path is resolved first.
"""
import json
import tracemalloc

import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core.run.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning")


def run(argv, capsys):
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


def _frame(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 1] += X[:, 0]
    X[:, 2] += X[:, 1]
    return pd.DataFrame(X, columns=list("abcd")[:d])


def test_report_from_a_manifest_beyond_the_limits_does_not_refit(tmp_path, capsys, monkeypatch):
    from colide_core.run.manifest import build_manifest

    X = _frame()
    X.to_csv(tmp_path / "data.csv", index=False)
    # converges in about 1,600 steps, but its budget (600,000 iterations) is beyond the dashboard's 500,000
    est = colide_core.CoLiDE("ev", mu_schedule=(1.0, 0.1), s_schedule=(1.0, 1.0), max_iter=(300000, 300000)).fit(X)
    (tmp_path / "manifest.json").write_text(json.dumps(build_manifest(est, X)))
    fits = []
    real_fit = colide_core.CoLiDE.fit
    monkeypatch.setattr(colide_core.CoLiDE, "fit", lambda self, *a, **k: fits.append(1) or real_fit(self, *a, **k))
    status, err = run(["report", tmp_path / "data.csv", "--manifest", tmp_path / "manifest.json",
                       "--out", tmp_path / "r", "--random-graphs", 5, "--rescalings", 50], capsys)
    assert status == 0, err
    assert fits == []                                # no refit at all (was 1 + 50)
    assert "exceed the report's limits for refits" in err and "max_iter" in err
    assert (tmp_path / "r" / "report.html").is_file()


def test_report_from_an_honest_manifest_still_refits(tmp_path, capsys, monkeypatch):
    from colide_core.run.manifest import build_manifest

    X = _frame()
    X.to_csv(tmp_path / "data.csv", index=False)
    est = colide_core.CoLiDE("ev").fit(X)
    (tmp_path / "manifest.json").write_text(json.dumps(build_manifest(est, X)))
    fits = []
    real_fit = colide_core.CoLiDE.fit
    monkeypatch.setattr(colide_core.CoLiDE, "fit", lambda self, *a, **k: fits.append(1) or real_fit(self, *a, **k))
    status, err = run(["report", tmp_path / "data.csv", "--manifest", tmp_path / "manifest.json",
                       "--out", tmp_path / "r", "--random-graphs", 5, "--rescalings", 2], capsys)
    assert status == 0, err
    assert len(fits) == 1 + 2 and "exceed" not in err


def test_a_bad_cell_among_numbers_is_the_example_shown():
    from colide_core.data import io as cio

    rows = ["a,b,c"] + [f"{i}.5,{i},{2 * i}" for i in range(30)]
    rows[17] = "16.5,0x10,32"
    df = cio.read_table("\n".join(rows).encode(), "x.csv")
    with pytest.raises(cio.DataValidationError) as err:
        cio.validate_data(df)
    assert "holds e.g. 0x10" in str(err.value) or "holds e.g. '0x10'" in str(err.value)


def test_a_wide_upload_is_refused_from_its_header_before_it_is_parsed(monkeypatch):
    from colide_core.data import readers as cio
    from colide_core.data.io import INTERACTIVE_MAX_NODES
    from dashboard.data import UPLOAD_MAX_COLUMNS, UploadProblem, dataset_from_upload

    header = ",".join(f"c{j}" for j in range(10_000))
    body = "\n".join(",".join("1" for _ in range(10_000)) for _ in range(3))
    parsed = []
    real = cio._parse_delimited
    monkeypatch.setattr(cio, "_parse_delimited", lambda *a, **k: parsed.append(1) or real(*a, **k))
    with pytest.raises(UploadProblem, match=f"10000 columns; at most {UPLOAD_MAX_COLUMNS}"):
        dataset_from_upload((header + "\n" + body).encode(), "wide.csv")
    assert parsed == []                               # never handed to pandas in full
    assert INTERACTIVE_MAX_NODES < UPLOAD_MAX_COLUMNS <= 2 * INTERACTIVE_MAX_NODES


def test_a_huge_quoted_dagitty_attribute_costs_no_memory_beyond_the_text():
    from colide_core.graph.export import _dagitty_tokens
    from colide_core.graph.reference import read_reference

    text = 'dag { a [label="' + "x" * 1_500_000 + '"] a -> b }'
    tracemalloc.start()
    try:
        toks = _dagitty_tokens(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert toks[3][0] == "attrs" and len(toks[3][1]) > 1_500_000
    assert peak < 3 * len(text)                        # was about 250 times the text
    ref = read_reference(text.encode(), "ref.dagitty", ["a", "b"])
    assert ref.n_edges == 1
    # the escapes still read as before
    assert _dagitty_tokens('dag { "e\\"f" [x="1 \\"]\\" 2"] }')[2:4] == [
        ("name", 'e"f'), ("attrs", '[x="1 \\"]\\" 2"]')]


def test_bench_out_cannot_leave_the_config_folder_through_a_symlink(tmp_path, capsys, monkeypatch):
    conf = tmp_path / "conf"
    conf.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (conf / "link").symlink_to(outside, target_is_directory=True)
    (conf / "c.toml").write_text('[bench]\nseeds = [0]\nout = "link/res"\n[data]\nn_nodes = 3\nn_samples = 20\n'
                                 "[methods.SortNRegress]\n")
    monkeypatch.chdir(tmp_path)
    status, err = run(["bench", conf / "c.toml", "--jobs", 1], capsys)
    assert status == 2 and "leads outside the config's directory" in err
    assert list(outside.iterdir()) == []
    # a plain sub-folder is still fine
    (conf / "c.toml").write_text('[bench]\nseeds = [0]\nout = "res"\n[data]\nn_nodes = 3\nn_samples = 20\n'
                                 "[methods.SortNRegress]\n")
    assert run(["bench", conf / "c.toml", "--jobs", 1], capsys)[0] == 0
    assert (conf / "res" / "summary.csv").is_file()
