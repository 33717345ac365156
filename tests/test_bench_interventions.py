"""benchmarks/bench_interventions.py: the paired-bootstrap summary, on hand-made SHDs."""
import numpy as np

from benchmarks import bench_interventions as bench


def test_bootstrap_summary_pairs_each_method_with_the_best_gies():
    # GIES log has the lowest mean (15), so it is the reference. CoLiDE - GIES log per resample:
    # 13-15, 14-14, 12-16, 16-15 = -2, 0, -4, +1: mean -1.25; better 2, equal 1, worse 1.
    shd = {"CoLiDE-NV raw, masked": np.array([13, 14, 12, 16]),
           "GIES raw": np.array([20, 21, 19, 20]),
           "GIES log": np.array([15, 14, 16, 15]),
           "GIES asinh": np.array([16, 16, 16, 16])}
    lines = bench._bootstrap_markdown(shd, 4)
    assert "best GIES (GIES log)" in lines[2]
    row = next(line for line in lines if line.startswith("| CoLiDE-NV"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "13.8 ± 1.5"  # mean 13.75, population sd sqrt(2.1875) = 1.479
    assert cells[2].startswith("-1.25 [") and cells[3] == "2 / 1 / 1"
    assert "| GIES log | 15.0 ± 0.7 | – (GIES's best) | – |" in lines
    assert any(line.startswith("| GIES raw | 20.0 ± 0.7 | +5.00") and line.endswith("| 0 / 0 / 4 |") for line in lines)
