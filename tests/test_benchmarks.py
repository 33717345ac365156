"""The benchmark scripts that call the fast solver's private kernels still match their signatures.

No timing is asserted (that is the benchmarks' job); these tests only run the scripts on tiny
problems and check that what they print is well-formed.
"""
import sys
from pathlib import Path

import pytest

from colide_core import _fast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


def test_bench_step_parts_runs_on_the_current_kernels(capsys):
    if not _fast.HAVE_NUMBA:
        pytest.fail("numba is pinned in requirements.txt and must be installed")
    import bench_step_parts

    bench_step_parts.main(["--sizes", "10", "--settings", "EV,NV", "--steps", "5"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| EV") or line.startswith("| NV")]
    assert [r.split("|")[1].strip() for r in rows] == ["EV", "NV"]
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        assert len(cells) == 14
        assert int(cells[1]) == 10
        # The three whole-step times (k = 1, 3, 10), the certified step and the floor are
        # positive, finite numbers of microseconds.
        for c in (cells[3], cells[4], cells[5], cells[11], cells[12]):
            assert 0.0 < float(c) < float("inf")


def test_bench_sensitivity_summarise_counts_each_extra_fit_against_the_faithful_one():
    import bench_sensitivity

    # Two hand-made problems. Problem 1: every fit agrees with the faithful one. Problem 2: the
    # "inv" fit finds SHD 7 instead of 5 with an objective 2e-3 (relative) higher, so it counts
    # once as "SHD differs" and once as "obj > +1e-3"; the perturbed fit differs in SHD only
    # (its objective is 5e-4 higher: under the 1e-3 bound).
    def row(seed, shd, obj, shd_p, obj_p, shd_i, obj_i):
        return dict(setting="EV", d=50, seed=seed,
                    shd_faithful=shd, obj_faithful=obj, it_faithful=1000,
                    shd_perturbed=shd_p, obj_perturbed=obj_p, it_perturbed=1000,
                    shd_fast=shd, obj_fast=obj, it_fast=200,
                    shd_inv=shd_i, obj_inv=obj_i, it_inv=300)

    rows = [row(100, 3, 1.0, 3, 1.0, 3, 1.0), row(101, 5, 2.0, 6, 2.001, 7, 2.004)]
    table = bench_sensitivity.summarise(rows).splitlines()
    assert "mean SHD inverse every K" in table[0]
    cells = [c.strip() for c in table[2].strip("|").split("|")]
    # setting, d, problems, faithful 4.0, perturbed 4.5, fast 4.0, counts, inv 5.0, inv counts, iterations
    assert cells == ["EV", "50", "2", "4.0", "4.5", "4.0", "1 / 0", "0 / 0", "5.0", "1 / 1", "1000 / 200 / 300"]
