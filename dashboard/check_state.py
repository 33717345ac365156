"""Session-state keys of the Check page (``pages/check.py``).

:func:`init` is called from :func:`dashboard.state.init` (one line there), so these keys get their
defaults in the same place and at the same time as every other key of the dashboard. Widgets are
created with ``key=`` only.
"""
from __future__ import annotations

__all__ = ["REFERENCE", "REF_STATUS", "REFITS", "PATH", "WIDGET_DEFAULTS", "init"]

#: dict(key=dataset content hash, name=file name, ref=colide_core.graph.reference.Reference) or None:
#: the user's reference graph for the current dataset ("against your reference").
REFERENCE = "check_reference"
#: (level, markdown text, already escaped) about the last reference upload, or None.
REF_STATUS = "check_ref_status"
#: set of (dataset key, params, threshold) for which "Standardise and refit" was asked.
REFITS = "check_refits"
#: dict(key=(dataset key, variant, overrides), path=colide_core.solver.path.LambdaPath) or None.
PATH = "check_path"

WIDGET_DEFAULTS = {
    "check_variant": "NV",
    "check_n_random": 100,
    "check_n_rescale": 3,
    "check_tab": "Verdicts",  # the open tab (stateful st.tabs)
}


def init(ss) -> None:
    """Fill in the missing keys of ``ss`` (the session state) with their defaults (idempotent)."""
    ss.setdefault(REFERENCE, None)
    ss.setdefault(REF_STATUS, None)
    ss.setdefault(REFITS, set())
    ss.setdefault(PATH, None)
    for key, value in WIDGET_DEFAULTS.items():
        if key not in ss:
            ss[key] = value
