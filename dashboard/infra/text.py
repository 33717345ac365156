"""Escaping helpers for user-supplied strings (file names, column names) shown in the UI.

Escape each user string exactly once, where it meets markup. Two targets need escaping:

* HTML (plotly text, which accepts a subset of HTML and decodes entities; HTML written by hand,
  such as the graph legend): :func:`html_escape`, a thin wrapper over :func:`markupsafe.escape`.
  Not for vis-network labels and tooltips in :mod:`colide_core.render.graph_html`: those are plain text
  (canvas, ``innerText``), and an escaped name would be shown as ``gene&lt;B&gt;``.
* Streamlit markdown (``st.markdown``, ``st.caption``, widget labels): :func:`md_escape`
  backslash-escapes the markdown punctuation (so ``*``, ``[x](y)``, ``$x$`` and Streamlit's
  ``:red[...]`` / ``:emoji:`` directives stay literal) and then HTML-escapes ``<``, ``>``
  and ``&`` with markupsafe.
"""
from __future__ import annotations

import re

import markupsafe

from colide_core.graph.export import html_escape  # the one HTML escape (markupsafe)

__all__ = ["html_escape", "md_escape", "solver_label", "SOLVER_LABELS", "fmt_seconds", "fmt_lambda", "plural", "convergence_note", "safe_filename",
           "checkpoint_caption", "METRIC_LABELS"]

# CommonMark allows a backslash before any ASCII punctuation; these are the characters that
# can start markdown syntax or a Streamlit directive (``:``, ``$``).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:^=])")


def md_escape(text) -> str:
    """Return ``text`` escaped for Streamlit markdown.

    Parameters
    ----------
    text : object
        A user-supplied name.

    Returns
    -------
    str
        The text with markdown punctuation backslash-escaped and HTML special characters
        replaced by entities, so it renders literally.
    """
    return str(markupsafe.escape(_MD_SPECIAL.sub(r"\\\1", str(text))))


def fmt_seconds(seconds) -> str:
    """A duration for the UI, never "0.0 s": milliseconds below 1 s, else 2 significant digits.

    Parameters
    ----------
    seconds : float
        Duration in seconds (>= 0).

    Returns
    -------
    str
        ``"3 ms"``, ``"0.4 ms"``, ``"1.7 s"``, ``"12 s"``, ``"3.2 min"``; ``"—"`` when not finite.
    """
    import math

    t = float(seconds)
    if not math.isfinite(t) or t < 0:
        return "—"
    if t < 1e-3:
        return f"{t * 1e3:.1g} ms" if t > 0 else "0 ms"
    if t < 1.0:
        return f"{t * 1e3:.2g} ms" if t * 1e3 < 100 else f"{t * 1e3:.0f} ms"
    # two significant digits, rounded before the unit is chosen: 99.9 s is "1.7 min", never "1e+02 s"
    for value, unit, top in ((t, "s", 100.0), (t / 60, "min", 100.0), (t / 3600, "h", math.inf)):
        rounded = float(f"{value:.2g}")
        if rounded < top:
            return f"{rounded:g} {unit}"
    return "—"


def fmt_lambda(lambda1) -> str:
    """λ with 3 significant digits, the one format of the app (``0.05``, ``0.158``, ``2``)."""
    return f"{float(lambda1):.3g}"


def plural(count: int, word: str, plural_word: str | None = None) -> str:
    """``"1 check"``, ``"2 checks"``: a count with its noun in the right number."""
    count = int(count)
    return f"{count} {word if count == 1 else (plural_word or word + 's')}"


def convergence_note(result, tol) -> tuple:
    """What a user should know about a finished solve: a (level, text) pair.

    Parameters
    ----------
    result : colide_core.SolverResult
        The solver's record (``stage_converged``, ``history``, ``n_iter``, ``fit_time``).
    tol : float
        The tolerance the fit used (``CoLiDE.tol``).

    Returns
    -------
    (str, str)
        ``("success", ...)`` when the last stage met ``tol`` (early stages ending on their step
        budget is how the central path is meant to work and is not a problem), with the final
        relative change of the objective over the last checkpoint; ``("warning", ...)`` saying what to do when the last
        stage used its whole budget; ``("info", ...)`` when the record does not say.
    """
    import math

    n_iter = int(result.n_iter)
    head = f"{n_iter:,} iterations in {fmt_seconds(result.fit_time)}"
    rel = result.final_relative_change
    rel_text = (f"the objective changed by {rel:.1e} (relative) over its last checkpoint" if math.isfinite(rel)
                else "no checkpoint history recorded")
    last = result.last_stage_converged
    if last is True:
        return "success", f"{head}: the last stage converged ({rel_text})."
    if last is False:
        return "warning", (f"{head}: the last stage stopped on its iteration budget before the relative change "
                           f"fell below tol = {tol:g} ({rel_text}). The graph may still change: raise the last "
                           "entry of max_iter, or use a larger λ.")
    return "info", f"{head} ({rel_text})."


_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")


def checkpoint_caption(k, history, mu, s_used, n_edges, threshold) -> str:
    """One line about checkpoint ``k`` of a recorded fit (the Playback tab).

    Parameters
    ----------
    k : int
        Checkpoint index, from 0.
    history : dict of ndarray
        :attr:`colide_core.SolverResult.history` (``stage``, ``iteration``, ``h``, ``objective``).
    mu, s_used : sequence of float
        μ and s of each stage.
    n_edges : int
        Edges of the checkpoint's W kept at ``threshold``.
    threshold : float

    Returns
    -------
    str
        Plain text: "Checkpoint k+1 of n: stage (μ, s), iteration, h(W), objective, edges".
    """
    stage = int(history["stage"][k])
    return (f"Checkpoint {k + 1} of {len(history['stage'])}: stage {stage + 1} (μ = {mu[stage]:g}, "
            f"s = {s_used[stage]:g}), iteration {history['iteration'][k]}, h(W) = {history['h'][k]:.3g}, "
            f"objective = {history['objective'][k]:.4g}, {n_edges} edges above {threshold:g}.")


def safe_filename(stem: str, max_len: int = 120) -> str:
    """A download file name stem from user text: only ``A-Za-z0-9._-``, never empty or hidden.

    Parameters
    ----------
    stem : str
        E.g. ``"colide_<dataset name>_nv_lambda0.05_thr0.3"`` (the dataset name is user text).
    max_len : int, default=120

    Returns
    -------
    str
        Runs of other characters become one ``_``; leading dots and dashes are dropped; cut to
        ``max_len`` characters; ``"colide"`` when nothing is left.
    """
    out = re.sub(r"_{2,}", "_", _UNSAFE_FILENAME.sub("_", str(stem))).lstrip(".-_")[:max_len].rstrip("._-")
    return out or "colide"


#: The solver names shown beside a drawing (``colide_core.CoLiDE(solver=...)``); a fit of "auto"
#: says which of its candidates won (``SolverResult.choice``, :func:`solver_label`).
SOLVER_LABELS = {"auto": "auto", "fast": "fast solver", "adam": "paper-faithful solver",
                 "topo": "CoLiDE-TOPO"}
#: What each ``solver="auto"`` candidate is, in words (issue 51).
AUTO_CHOICE_LABELS = {"fast": "the fast solver's optimum", "topo": "CoLiDE-TOPO's order search (lower score)",
                      "warm": "the previous fit (lower score)", "topo-warm": "the order search from the previous fit"}


def solver_label(fit) -> str:
    """The solver a fit record used, in words ("fast solver", "paper-faithful solver", "CoLiDE-TOPO").

    Parameters
    ----------
    fit : dashboard.fitting.FitResult or mapping
        A fit record (its ``params`` hold ``solver``) or a mapping of ``colide_core.CoLiDE``
        keyword arguments; a missing ``solver`` is the default.

    Returns
    -------
    str

    Examples
    --------
    >>> solver_label({"solver": "adam"})
    'paper-faithful solver'
    """
    from colide_core.defaults import SOLVER

    params = dict(getattr(fit, "params", fit) or {})
    name = params.get("solver", SOLVER)
    choice = getattr(getattr(fit, "result", None), "choice", None)
    if name == "auto" and choice:
        return f"auto: {AUTO_CHOICE_LABELS.get(choice.get('solver'), str(choice.get('solver')))}"
    return SOLVER_LABELS.get(name, str(name))


#: evaluate() key -> display label, in display order.
METRIC_LABELS = {
    "shd": "SHD",
    "shd_cpdag": "SHD-C",
    "sid": "SID",
    "tpr": "TPR",
    "fdr": "FDR",
    "fpr": "FPR",
    "nnz": "NNZ",
    "shd_norm": "SHD / d",
    "shd_cpdag_norm": "SHD-C / d",
    "sid_norm": "SID / d",
    "sigma_rel_err": "σ relative error",
}
