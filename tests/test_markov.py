"""The Markov check without causal-learn (an optional extra, ``baselines``): one clear error.

The Markov check's Fisher-z tests are causal-learn's; without it, ``markov_check`` (and
``run_checks``, which runs it) raise ``MissingExtraError`` naming the extra, never a bare
``ModuleNotFoundError``. The check's numbers are tested in tests/test_checks.py.
"""
import sys

import numpy as np
import pytest

from colide_core.evaluation.checks import run_checks
from colide_core.evaluation.markov import markov_check
from colide_core.exceptions import MissingExtraError


@pytest.fixture
def no_causal_learn(monkeypatch):
    for name in [m for m in sys.modules if m == "causallearn" or m.startswith("causallearn.")] + ["causallearn"]:
        monkeypatch.setitem(sys.modules, name, None)  # also hides a submodule imported earlier


def test_markov_check_without_causal_learn_names_the_baselines_extra(no_causal_learn):
    X = np.random.default_rng(0).normal(size=(50, 3))
    A = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])  # a chain X0 -> X1 -> X2
    with pytest.raises(MissingExtraError) as err:
        markov_check(X, A, n_random=0)
    assert (err.value.package, err.value.extra) == ("causal-learn", "baselines")
    assert str(err.value) == ("The Markov check needs causal-learn, which is not installed: "
                              "pip install 'colide-dashboard[baselines]'")
    assert isinstance(err.value, ImportError) and err.value.__cause__ is None
    with pytest.raises(MissingExtraError, match=r"colide-dashboard\[baselines\]"):
        run_checks(X, A, n_random=0)
