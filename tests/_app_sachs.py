"""A page test's start on Sachs with all nine conditions (shared by the AppTests of issue 31)."""
import colide_core

#: A short schedule: the page tests compare the page with the library, not with the paper.
from tests._schedules import QUICK  # noqa: E402 - the suite's short schedule


def sachs_all_app(new_app, page=None, overrides=QUICK):
    """An AppTest on the Data page's "all nine conditions" Sachs data, with ``overrides`` as the
    solver overrides, switched to ``page`` when given.

    Returns ``(at, record)``: the app and ``load_sachs(rows="all", return_record=True)``.
    """
    at = new_app()
    at.run()
    at.selectbox(key="data_sachs_rows").set_value("all").run()
    at.button(key="data_use_sachs").click().run()
    assert not at.exception, at.exception
    at.session_state["solver_overrides"] = dict(overrides)
    if page:
        at.switch_page(page).run()
        assert not at.exception, at.exception
    return at, colide_core.load_sachs(rows="all", return_record=True)
