"""The dashboard's own exceptions, in one place (each re-exported by the module that raises it).

* the stopped computations, subclasses of :class:`colide_core.exceptions.Stopped` (so
  ``except Stopped`` catches each): :class:`FitStopped` (a fit, :mod:`dashboard.fitting`),
  :class:`ChecksStopped` (the model checks) and :class:`PathStopped` (the λ path, both
  :mod:`dashboard.checks`). Each is built as ``FitStopped(result)``, its partial result readable
  under its old name (``.result``, ``.report``, ``.path``) and as ``.partial``; it is raised out of
  a cached function so that a partial result is never cached;
* :class:`UploadProblem`: an uploaded file that cannot become a dataset (:mod:`dashboard.data`);
* :class:`ManifestProblem` and :class:`DataMismatch`: an uploaded manifest that cannot be shown
  (:mod:`dashboard.manifests`);
* :class:`SlotBusy`: no compute slot free in time for a person's request (:mod:`dashboard.infra.jobs`).

Messages are plain text: the pages escape them where they meet markdown.
"""
from __future__ import annotations

from colide_core.exceptions import Stopped

__all__ = ["FitStopped", "ChecksStopped", "PathStopped", "UploadProblem", "ManifestProblem", "DataMismatch",
           "SlotBusy"]


class _StoppedWith(Stopped):
    """A stopped dashboard computation, built as ``Cls(partial)`` (the old form of its subclasses).

    Parameters
    ----------
    partial : object, optional
        What was computed before the stop; also set as the attribute named by the class's
        ``partial_name`` (the subclass's older name for it).
    message : str, optional
        By default the class's ``default_message``.
    """

    partial_name: str | None = None

    def __init__(self, partial=None, message=None):
        super().__init__(message, partial=partial)
        if self.partial_name:
            setattr(self, self.partial_name, partial)


class FitStopped(_StoppedWith):
    """Raised out of :func:`dashboard.fitting.fit_colide` when the solve was stopped.

    ``.result`` (also ``.partial``) is the partial fit, a ``dashboard.fitting.FitResult``.
    """

    default_message = "stopped by the user"
    partial_name = "result"


class ChecksStopped(_StoppedWith):
    """The checks were stopped (Stop, or the session ended); ``.report`` (also ``.partial``) is the partial report.

    Raised by :func:`dashboard.checks.run_checks_cached` so a partial report is never cached.
    """

    default_message = "the checks were stopped"
    partial_name = "report"


class PathStopped(_StoppedWith):
    """The λ path was stopped; ``.path`` (also ``.partial``) holds the λ values solved before (never cached)."""

    default_message = "the λ path was stopped"
    partial_name = "path"


class UploadProblem(Exception):
    """An uploaded file could not be turned into a dataset; ``str(exc)`` is the user message.

    Parameters
    ----------
    message : str
    problems : iterable of colide_core.exceptions.DataValidationError, optional

    Attributes
    ----------
    problems : list of colide_core.exceptions.DataValidationError
        Every problem met at once (``colide_core.data.io.data_problems``), each fixable one with
        ``kind`` in ``colide_core.data.io.FIXABLE``; empty when the file could not be read at all.
    """

    def __init__(self, message, problems=()):
        super().__init__(message)
        self.problems = list(problems)


class ManifestProblem(ValueError):
    """An uploaded manifest cannot be shown (malformed, unsupported, or not for this data)."""


class DataMismatch(ManifestProblem):
    """The manifest was made on data other than the current dataset."""


class SlotBusy(RuntimeError):
    """No compute slot was free within the wait a person's request allows (:func:`dashboard.infra.jobs.interactive`)."""
