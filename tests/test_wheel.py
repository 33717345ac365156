"""The library stands alone: its wheel installs into a fresh virtual environment without any
extra (no dashboard, Dask, numba or test packages) and there loads the bundled Sachs data as
package resources and fits CoLiDE-NV to the paper's SHD of 12.

The dependencies are resolved by pip from the configured index, constrained to the pinned
versions of requirements.txt (so they come from pip's cache after ``make``).
"""
import re
import shutil
import subprocess
import sys

import pytest

HEAVY = ("streamlit", "plotly", "pyvis", "matplotlib", "dask", "jinja2")


@pytest.mark.slow
def test_the_wheel_installs_alone_and_fits_sachs(tmp_path, repo_root):
    src = tmp_path / "src"  # build from a copy, so the checkout gains no build/ folder
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo_root / name, src / name)
    for pkg in ("colide_core", "dashboard"):
        shutil.copytree(repo_root / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(src), "-w", str(dist)],
                   check=True, cwd=tmp_path)
    wheel = next(dist.glob("colide_dashboard-*.whl"))
    constraints = tmp_path / "constraints.txt"  # pip's constraints take no extras
    constraints.write_text(re.sub(r"\[[^\]]*\]", "", (repo_root / "requirements.txt").read_text()))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-compile", "-c", str(constraints), str(wheel)],
                   check=True, cwd=tmp_path)
    code = (
        "import sys, colide_core\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {set(HEAVY)!r})\n"
        "X, B = colide_core.load_sachs()\n"
        "model = colide_core.CoLiDE('nv').fit(X)\n"
        "print(heavy, X.shape, colide_core.evaluate(B.to_numpy(), model.adjacency_)['shd'], colide_core.__file__)\n"
        "d = colide_core.load_sachs(rows='all', truth='cmu20')\n"  # the gzip CSV and the truths ship too
        "print(d.X.shape, int(d.B_true.to_numpy().sum()), len(d.targets))\n"
    )
    out = subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path).stdout
    heavy, shape, shd, where, full = re.fullmatch(r"(\[.*\]) (\(.*\)) (\d+) (\S+)\n(.*)\n", out).groups()
    assert heavy == "[]" and shape == "(853, 11)" and int(shd) == 12
    assert full == "(7466, 11) 20 9"
    assert str(venv) in where  # the installed wheel, not the checkout
    installed = subprocess.run([str(py), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                               check=True).stdout.lower()
    for extra in ("streamlit", "plotly", "pyvis", "dask", "numba", "pytest", "jinja2"):
        assert f"\n{extra}==" not in "\n" + installed, extra
