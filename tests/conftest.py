"""Shared pytest fixtures. The repository root is importable through ``pythonpath = .`` in
pytest.ini (and the editable install that ``make`` does), not through ``sys.path`` edits."""
import pytest


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
