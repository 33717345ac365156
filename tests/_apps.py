"""Shared AppTest openers of the page tests (one way to reach a page on a given dataset)."""


def open_predict(new_app, ds, overrides):
    """An AppTest session on the Predict page for ``ds``: Learn's fit with the solver settings
    ``overrides`` (a schedule of ``tests._schedules``), then Predict, without an exception."""
    from dashboard.infra import state

    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = dict(overrides)
    at.session_state[state.DATASET] = ds
    at.session_state["fit_results"] = {}
    at.switch_page("pages/learn.py").run()
    at.switch_page("pages/predict.py").run()
    assert not at.exception, at.exception
    return at


def open_ranked(new_app, ds, n_boot):
    """:func:`open_predict` on ``ds`` at the quick schedule, with the experiments ranked on ``n_boot``
    bootstrap refits (the plan's Run), without an exception."""
    from tests._schedules import QUICK

    at = open_predict(new_app, ds, QUICK)
    at.number_input(key="plan_n_boot").set_value(n_boot).run()
    at.button(key="plan_run").click().run()
    assert not at.exception, at.exception
    return at
