"""One exceptions module: every error a user can catch has one home, and our ConvergenceWarning
is caught by a filter written for scikit-learn's."""
import warnings

import numpy as np
import pytest
import sklearn.exceptions

import colide_core
from colide_core import CoLiDE, exceptions


def test_convergence_warning_is_scikit_learns():
    assert issubclass(colide_core.ConvergenceWarning, sklearn.exceptions.ConvergenceWarning)
    assert colide_core.ConvergenceWarning is exceptions.ConvergenceWarning
    X = np.random.default_rng(0).normal(size=(50, 3))
    # A user's filter for scikit-learn's warning silences ours: one step per stage cannot converge.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=sklearn.exceptions.ConvergenceWarning)
        CoLiDE("ev", max_iter=(1, 1, 1, 1), checkpoint=1, tol=0.0).fit(X)
    with pytest.warns(sklearn.exceptions.ConvergenceWarning):
        CoLiDE("ev", max_iter=(1, 1, 1, 1), checkpoint=1, tol=0.0).fit(X)


def test_every_public_error_is_defined_in_the_exceptions_module():
    from colide_core._validation import NodeNameError
    from colide_core.data.io import DataValidationError
    from colide_core.evaluation.baselines import MethodError
    from colide_core.run.manifest import ManifestError, RunSettingsError

    from colide_core.graph.export import UnknownNodesError

    for cls in (NodeNameError, DataValidationError, MethodError, ManifestError, RunSettingsError, UnknownNodesError):
        assert cls.__module__ == "colide_core.exceptions" and getattr(exceptions, cls.__name__) is cls
    assert issubclass(RunSettingsError, exceptions.InvalidParameterError)
    assert issubclass(exceptions.InvalidParameterError, (ValueError, TypeError))
