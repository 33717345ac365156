"""Which code made a manifest (issue 39): the library's installed version always, and a git commit
only from a checkout of this project, never the commit of a user's repository that happens to
hold the virtual environment. The installed wheel itself is checked in ``tests/test_wheel.py``.
"""
import subprocess
from importlib import metadata

import pytest

from colide_core.run import manifest, provenance

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main"]


def _repository(root, pyproject_name=None):
    """A git repository at ``root`` with one commit (and a pyproject.toml naming ``pyproject_name``)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("a user's project\n")
    if pyproject_name is not None:
        (root / "pyproject.toml").write_text(f'[project]\nname = "{pyproject_name}"\nversion = "1.0"\n')
    subprocess.run(GIT + ["init", "-q", str(root)], check=True)
    subprocess.run(GIT + ["-C", str(root), "add", "."], check=True)
    subprocess.run(GIT + ["-C", str(root), "commit", "-q", "-m", "theirs"], check=True)
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.parametrize("name", [None, "their-project", "colide-dashboard"])
def test_an_installed_copy_inside_a_users_repository_has_no_commit(tmp_path, monkeypatch, name):
    # colide_core installed in a virtual environment inside the user's repository: the top level
    # is theirs (even if their pyproject were named like ours), not the folder holding colide_core
    _repository(tmp_path / "project", name)
    site = tmp_path / "project" / ".venv" / "lib" / "python3.11" / "site-packages"
    (site / "colide_core").mkdir(parents=True)
    monkeypatch.setattr(provenance, "_REPO_DIR", site)
    assert manifest.git_commit() == {"commit": None, "dirty": None}
    assert manifest.environment_info()["git"] == {"commit": None, "dirty": None}


@pytest.mark.parametrize("name", [None, "their-project"])
def test_a_repository_around_our_sources_is_ours_only_if_its_pyproject_is(tmp_path, monkeypatch, name):
    _repository(tmp_path / "project", name)
    (tmp_path / "project" / "colide_core").mkdir()
    monkeypatch.setattr(provenance, "_REPO_DIR", tmp_path / "project")
    assert manifest.git_commit() == {"commit": None, "dirty": None}


def test_a_checkout_of_this_project_records_its_commit(tmp_path, monkeypatch):
    commit = _repository(tmp_path / "checkout", "colide-dashboard")
    (tmp_path / "checkout" / "colide_core").mkdir()
    monkeypatch.setattr(provenance, "_REPO_DIR", tmp_path / "checkout")
    assert manifest.git_commit() == {"commit": commit, "dirty": False}
    (tmp_path / "checkout" / "README.md").write_text("changed\n")
    assert manifest.git_commit() == {"commit": commit, "dirty": True}
    # an explicit path is any repository's commit, as before
    other = _repository(tmp_path / "other")
    assert manifest.git_commit(tmp_path / "other")["commit"] == other


def test_the_environment_records_the_library_version():
    packages = manifest.environment_info()["packages"]
    assert packages["colide-dashboard"] == metadata.version("colide-dashboard")
    assert list(packages)[0] == "colide-dashboard"
