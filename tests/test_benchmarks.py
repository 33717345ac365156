"""The benchmark scripts that call the fast solver's private kernels still match their signatures.

No timing is asserted (that is the benchmarks' job); these tests only run the scripts on tiny
problems and check that what they print is well-formed.
"""
import pytest

from benchmarks import bench_solver
from benchmarks.research import bench_sensitivity, bench_step_parts
from colide_core.solver import _fast


def test_bench_step_parts_runs_on_the_current_kernels(capsys):
    if not _fast.HAVE_NUMBA:
        pytest.fail("numba is pinned in requirements.txt and must be installed")
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


def test_bench_solver_targets_give_each_slow_case_its_gemm_ceiling_and_floor():
    # Hand-made rows. A d = 200 case: faithful 200 s; the fast solver 40 s in 100,000 steps; one
    # cov @ W gemm 0.25 ms. Ratio 200 / 40 = 5.0x; floor 100,000 x 0.25 ms = 25.0 s; ceiling
    # 200 / 25 = 8.0x (under 10x even if a step cost only its gemm). A d = 10 case passes
    # everything (ratio 100x), so it appears in no "where not" cell. An old row without the gemm
    # time gets no ceiling note.
    def row(case, d, t_faithful, t_fast, it_fast, gemm, setting="EV"):
        r = dict(case=case, setting=setting, d=d, seed=0, variant="ev", t_faithful=t_faithful,
                 it_faithful=100_000, t_fast=t_fast, it_fast=it_fast, ratio=t_faithful / t_fast,
                 shd_faithful=10, shd_fast=10, obj_faithful=1.0, obj_fast=1.0, obj_rel=0.0)
        if gemm is not None:
            r["gemm"] = gemm
        return r

    big = row("ER4-EV d=200 s0", 200, 200.0, 40.0, 100_000, 2.5e-4)
    small = row("ER4-EV d=10 s0", 10, 1.0, 0.01, 5_000, 1e-6)
    old = row("ER4-EV d=100 s0", 100, 30.0, 6.0, 80_000, None)
    assert bench_solver.ceiling(big) == pytest.approx(8.0)
    assert bench_solver.ceiling(small) == pytest.approx(200.0)
    assert bench_solver.ceiling(old) is None
    rows = [big, small, old]
    groups = {("EV", r["d"]): [r] for r in rows}
    lines = bench_solver.targets(rows, groups).splitlines()
    every_case = next(line for line in lines if line.startswith("| time ratio >= 10x"))
    assert "no (2 of 3)" in every_case
    assert "ER4-EV d=200 s0 (5.0x; ceiling 8.0x)" in every_case
    assert "ER4-EV d=100 s0 (5.0x)" in every_case
    assert "ER4-EV d=10 s0" not in every_case
    d200 = next(line for line in lines if line.startswith("| ER4 d = 200 < 20 s"))
    assert "ER4-EV d=200 s0 (40.0 s; floor 25.0 s)" in d200


def test_reproduce_topo_quick_prints_the_appendix_e_table(capsys):
    # A tiny run (2 graphs, d = 8, no scaling, no Sachs): the table has one row per metric with the
    # paper's row beside it, and the verdict lines name the targets.
    from benchmarks import reproduce_topo

    reproduce_topo.main(["--graphs", "2", "--d", "8", "--n", "300", "--scaling", "", "--no-sachs"])
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| metric |"))
    assert [c.strip() for c in header.strip("|").split("|")][1:6] == list(reproduce_topo.METHODS)
    assert "| SHD (paper) | 100.7 ± 29.6 | 100.9 ± 23.5 | 128.4 ± 38.0 | 88.8 ± 21.4 | 66.9 ± 15.4 |" in out
    assert "SHD ratio CoLiDE-TOPO-NV / CoLiDE-NV" in out and "swaps accepted" in out


def test_markdown_table_is_the_benchmarks_one_table_writer():
    from benchmarks._common import markdown_table

    lines = markdown_table(["d", "fit", 3], [[10, "CoLiDE-NV", ""], (20, None, 1.5)])
    assert lines == ["| d | fit | 3 |", "|---|---|---|", "| 10 | CoLiDE-NV |  |", "| 20 | None | 1.5 |"]
    assert markdown_table(["a"], []) == ["| a |", "|---|"]


def test_the_benchmarks_raw_records_resume_from_one_jsonl_reader(tmp_path):
    from benchmarks._common import append_jsonl, read_jsonl

    raw = tmp_path / "fits.jsonl"
    assert read_jsonl(raw, None) == []                      # nothing run yet: nothing to skip
    append_jsonl(raw, {"network": "ecoli70", "seed": 0, "shd": 34})
    append_jsonl(raw, {"network": "ecoli70", "seed": 1, "shd": 36.5, "λ": 0.05})
    append_jsonl(None, {"never": "written"})
    other = tmp_path / "other.jsonl"
    append_jsonl(other, {"seed": 2})
    assert read_jsonl(raw, other) == [{"network": "ecoli70", "seed": 0, "shd": 34},
                                      {"network": "ecoli70", "seed": 1, "shd": 36.5, "λ": 0.05}, {"seed": 2}]
    assert len(raw.read_text(encoding="utf-8").splitlines()) == 2   # one fit a line
