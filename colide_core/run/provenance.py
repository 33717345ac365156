"""Where a run came from: the git commit of the code and the versions of the packages (split from
:mod:`colide_core.run.manifest`, issue 47: no product module above 900 lines; that module
re-exports every name here).
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["PACKAGES", "git_commit", "environment_info"]

#: Packages whose versions every manifest records.
PACKAGES = ("numpy", "scipy", "pandas", "networkx", "scikit-learn", "causal-learn", "gadjid",
            "joblib", "pyarrow", "dask", "distributed", "matplotlib", "pydot", "gies", "jax",
            "jaxlib")

_REPO_DIR = Path(__file__).resolve().parents[2]  # the checkout holding colide_core/


def git_commit(path=None, timeout=5.0):
    """Git commit (and dirty flag) of this project's checkout, or of the repository at ``path``.

    Parameters
    ----------
    path : str or Path, optional
        Directory inside a repository, whose commit is returned. Default: the colide-dashboard
        sources, and then only from a checkout of this project: the repository's top level must
        be the folder holding ``colide_core/`` and a ``pyproject.toml`` of the project
        ``colide-dashboard``. An installed copy (a wheel in a virtual environment, even one inside
        the user's own repository) has no commit of ours: its version is in
        :func:`environment_info`.
    timeout : float, default 5.0
        Seconds before giving up on ``git``.

    Returns
    -------
    dict
        ``{"commit": 40-hex str or None, "dirty": bool or None}``; both None
        when git is missing, times out, or ``path`` is not in a repository (by default: not in a
        checkout of this project).
    """
    import tomllib

    unknown = {"commit": None, "dirty": None}
    cwd = str(path or _REPO_DIR)
    try:
        if path is None:
            top = subprocess.run(["git", "-C", cwd, "rev-parse", "--show-toplevel"], capture_output=True,
                                 text=True, timeout=timeout, check=False)
            if top.returncode != 0 or not os.path.samefile(top.stdout.strip(), _REPO_DIR):
                return unknown  # no repository, or the user's around an installed copy
            with open(_REPO_DIR / "pyproject.toml", "rb") as fh:
                if tomllib.load(fh).get("project", {}).get("name") != "colide-dashboard":
                    return unknown
        head = subprocess.run(["git", "-C", cwd, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=timeout, check=False)
        if head.returncode != 0:
            return unknown
        status = subprocess.run(["git", "-C", cwd, "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=timeout, check=False)
        dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
        return {"commit": head.stdout.strip() or None, "dirty": dirty}
    except (OSError, ValueError, subprocess.SubprocessError):  # ValueError: tomllib.TOMLDecodeError
        return unknown


def environment_info():
    """Python, platform, package versions (this library's first) and this project's git commit.

    Returns
    -------
    dict
        ``{"python": str, "platform": str, "packages": {name: version or None},
        "git": {"commit", "dirty"}}``; versions from :func:`importlib.metadata.version` (None
        when not installed), ``packages["colide-dashboard"]`` the installed version of this
        library; ``git`` from :func:`git_commit` (only for a checkout of this project).
    """
    packages = {}
    for name in ("colide-dashboard",) + PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    return {"python": sys.version.split()[0], "platform": platform.platform(),
            "packages": packages, "git": git_commit()}


# --------------------------------------------------------------------------------------------
# building and writing
# --------------------------------------------------------------------------------------------
