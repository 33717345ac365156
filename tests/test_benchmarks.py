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
        assert len(cells) == 12
        assert int(cells[1]) == 10
        # Both whole-step times and the floor are positive, finite numbers of microseconds.
        for c in (cells[3], cells[4], cells[10]):
            assert 0.0 < float(c) < float("inf")
