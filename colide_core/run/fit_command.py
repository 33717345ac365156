"""The exact ``python -m colide_core fit`` command that reproduces a manifest's fit.

:func:`fit_command` writes every step a manifest records from the raw file to ``W`` as a flag of
``fit`` (the settings from :data:`colide_core.settings.SETTINGS`, leaving out those the fit's
solver ignores, the cleaning, the transform, the prior knowledge and the conditions); the report
and the dashboard print it. :mod:`colide_core.run.manifest` re-exports it (its public import path).
"""
from __future__ import annotations

from colide_core import defaults
from colide_core.settings import SETTINGS, ignored_settings

__all__ = ["fit_command"]


def fit_command(manifest, data_name="DATA.csv", *, manifest_name="manifest.json", replay=True):
    """The exact ``python -m colide_core fit`` command that reproduces a manifest's fit.

    Every step from the raw file to ``W`` that the manifest records is a flag: the columns
    and rows dropped (``extra.preprocess``, written by the dashboard's upload and by ``fit``),
    the transforms (``transform``), every solver setting (``params``), the prior knowledge
    (read back from the manifest itself with ``--prior``) and the conditions (``conditions``).
    With ``replay=False`` the file already holds the data as fitted (dropped, transformed):
    the cleaning and transform flags are then left out, since replaying them would transform
    the transformed data (a silently different graph).

    Parameters
    ----------
    manifest : dict or Manifest
        A ``colide-manifest/1`` document (:func:`load_manifest` or the dict of
        :func:`manifest_from_result`).
    data_name : str, default "DATA.csv"
        The raw data file's name as the command should say it (shell-quoted here).
    manifest_name : str, default "manifest.json"
        The manifest file's name, for ``--prior`` (shell-quoted here).
    replay : bool, default True
        True: ``data_name`` is the raw file and the command replays the recorded cleaning and
        transform. False: ``data_name`` holds the data as fitted and the command replays neither.

    Returns
    -------
    str
        One shell command line.

    Raises
    ------
    ValueError
        If ``replay`` and the manifest records a transform with several steps (``fit
        --transform`` applies one); the command then cannot be exact.

    Examples
    --------
    >>> m = {"params": {"variant": "ev", "lambda1": 0.1, "threshold": 0.3, "solver": "auto",
    ...      "required": [["a", "b"]]}, "transform": [{"kind": "log"}],
    ...      "extra": {"preprocess": {"drop_non_numeric": True, "drop_nonfinite_rows": True}}}
    >>> fit_command(m, "my data.csv")
    "python -m colide_core fit 'my data.csv' --out results --variant ev --lambda1 0.1 --threshold 0.3 --solver auto --drop-non-numeric --drop-nonfinite-rows --transform log --prior manifest.json"
    >>> fit_command(m, "as_fitted.csv", replay=False)
    'python -m colide_core fit as_fitted.csv --out results --variant ev --lambda1 0.1 --threshold 0.3 --solver auto --prior manifest.json'
    """
    import shlex

    raw = getattr(manifest, "raw", manifest)
    p = dict(raw.get("params") or {})
    parts = ["python -m colide_core fit", shlex.quote(str(data_name)), "--out results"]
    solver = p.get("solver", defaults.SOLVER)
    for row in SETTINGS:  # every setting with a CLI flag, from its one declaration
        if row.flag is None or ignored_settings([row.name], solver):  # W does not depend on it (issue 47)
            continue
        value = p.get(row.name, row.default)
        if isinstance(value, list):
            value = tuple(value)
        if value is None or (row.name == "random_state" and not isinstance(value, int)):
            continue
        if row.dashboard != "own" and value == row.default:  # the noise model, λ, threshold, solver always
            continue
        parts.append(f"{row.flag} {shlex.quote(row.format(value))}")
    pre = dict((raw.get("extra") or {}).get("preprocess") or {}) if replay else {}
    for key, flag in (("drop_non_numeric", "--drop-non-numeric"), ("drop_nonfinite_rows", "--drop-nonfinite-rows"),
                      ("drop_constant_columns", "--drop-constant-columns")):
        if pre.get(key):
            parts.append(flag)
    steps = list(raw.get("transform") or []) if replay else []
    if len(steps) > 1:
        raise ValueError(f"the manifest records {len(steps)} transforms; `fit --transform` applies one")
    if steps:
        parts.append(f"--transform {steps[0]['kind']}")
        if steps[0].get("cofactor") is not None:
            parts.append(f"--cofactor {steps[0]['cofactor']!r}")
    if any(p.get(k) for k in ("forbidden", "required", "tiers")):
        parts.append(f"--prior {shlex.quote(str(manifest_name))}")
    cond = raw.get("conditions")
    if cond:
        parts.append(f"--conditions {shlex.quote(str(cond.get('column') or 'condition'))}")
        if cond.get("targets"):
            parts.append("--targets targets.json")
    return " ".join(parts)
