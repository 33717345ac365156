"""`fit --truth` prints its metrics without float noise (issue 48, m-4: it printed
"fdr=0.14285714285714285"): each value as in the manifest, to 3 significant digits."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning")


def _cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    return subprocess.run([sys.executable, "-m", "colide_core", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_fit_prints_its_metrics_to_three_significant_digits(tmp_path):
    r = _cli("simulate", "--out", "sim", "--nodes", 8, "--samples", 200, "--variance", "ev", "--seed", 5, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # a low threshold keeps a few false edges: an FDR such as 3/19, whose repr is long
    r = _cli("fit", "sim/data.csv", "--variant", "ev", "--lambda1", 0.02, "--threshold", 0.05,
             "--max-iter", "300,300,300,600", "--truth", "sim/B_true.csv", "--out", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    metrics = json.loads((tmp_path / "out" / "manifest.json").read_text())["results"]["metrics"]
    assert len(repr(float(metrics["fdr"]))) > 8, metrics  # the case of the walk: a fraction with float noise
    [line] = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith("metrics: ")]
    shown = dict(part.split("=") for part in line[len("metrics: "):].split(", "))
    assert set(shown) == {"shd", "tpr", "fdr", "sid"}, line
    for key, text in shown.items():
        value = metrics[key]
        want = f"{value:.3g}" if isinstance(value, float) else str(value)
        assert text == want, (key, text, want)
        assert len(re.sub(r"[^0-9]", "", text).lstrip("0")) <= 3, line
