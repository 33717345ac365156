"""Shared pytest set-up: the repository root importable without installing it; shared fixtures."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture
def solver_calls(monkeypatch):
    """A list that grows by one entry (the variant) per real ``CoLiDE.fit`` call (cache misses)."""
    import colide_core

    calls = []
    real_fit = colide_core.CoLiDE.fit

    def counting_fit(self, X, callback=None):
        calls.append(self.variant)
        return real_fit(self, X, callback=callback)

    monkeypatch.setattr(colide_core.CoLiDE, "fit", counting_fit)
    return calls
