"""The Check page writes λ as every page does, to 3 significant digits (issue 41's "λ = 0.158114 on
Check", open in the last walk): a fit at an off-grid λ (an Explorer cell, a loaded manifest) reads
"λ = 0.158" on its heading line, as on Learn."""
import math

import pytest

from tests._schedules import QUICK

pytestmark = pytest.mark.usefixtures("fresh_caches")


def test_the_check_page_writes_lambda_to_three_significant_digits(new_app):
    lam = math.sqrt(0.1 * 0.25)  # 0.15811388300841897, a point of a λ path between grid values
    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = dict(QUICK)
    at.session_state["learn_variant"] = "NV"
    at.session_state["learn_lambda1"] = lam
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    assert at.session_state["fit_results"]["nv"].lambda1 == pytest.approx(lam)
    at.session_state["check_n_random"] = 0
    at.session_state["check_n_rescale"] = 1
    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    [line] = [m.value for m in at.markdown if m.value.startswith("Checking **CoLiDE-NV**")]
    assert "at λ = 0.158, threshold 0.3" in line and "0.158114" not in line, line
