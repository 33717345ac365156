"""Issue 22, class 9 and escaping exactly once, in a real browser: what plotly and vis-network
draw for numeric-looking and HTML-like names (moved from tests/test_security_plots.py so that it
shares the session's chromium)."""
import numpy as np
import pytest

from colide_core.render.figures import noise_figure, sigma_interval_figure
from colide_core.render.graph_html import graph_html

NUMERIC_LOOKING = ["1", "1.0", "01"]
GENE = "gene<B>&C"


@pytest.fixture(scope="module")
def chromium_page(browser):
    # the session's one chromium (tests/e2e/conftest.py): a second sync_playwright in the same
    # process fails while it runs
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    attempted = []

    def handle(route):
        attempted.append(route.request.url)
        route.abort()

    context.route("**/*", handle)  # everything is inline; nothing may be fetched
    page = context.new_page()
    errors, dialogs = [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    yield page
    context.close()
    assert attempted == [] and errors == [] and dialogs == []


def _as_in_the_app(fig):
    """The figure with the plotly template a Streamlit app uses (Streamlit makes it the default).

    Plotly's own default template sets ``autotypenumbers="strict"``, which hides the bug; Streamlit's
    does not, so in the app plotly guesses a numeric axis from names such as "1", "1.0", "01".
    """
    import plotly.io as pio
    from streamlit.elements.lib.streamlit_plotly_theme import configure_streamlit_plotly_theme

    default = pio.templates.default
    configure_streamlit_plotly_theme()  # registers pio.templates["streamlit"] (and makes it the default)
    pio.templates.default = default  # leave the process as it was
    return fig.update_layout(template="streamlit")


def _draw(page, fig):
    page.set_content(_as_in_the_app(fig).to_html(include_plotlyjs=True, full_html=True), wait_until="load")
    page.wait_for_selector(".xtick text", timeout=20_000)
    ticks = page.eval_on_selector_all(".xtick text", "els => els.map(e => e.textContent)")
    bars = page.eval_on_selector_all(".bars .point", "els => els.length")
    xs = page.eval_on_selector_all(".bars .point", "els => els.map(e => e.getBoundingClientRect().x)")
    return ticks, bars, len({round(x) for x in xs})


@pytest.mark.browser
def test_browser_draws_three_bars_for_numeric_looking_names(chromium_page):
    fig = noise_figure(NUMERIC_LOOKING, {"NV": np.array([1.0, 2.0, 3.0])})
    ticks, bars, positions = _draw(chromium_page, fig)
    assert ticks == NUMERIC_LOOKING  # three categories, not one numeric tick "1"
    assert bars == 3 and positions == 3  # three bars side by side, not on top of each other
    S = np.array([[1.0, 2.0, 3.0], [1.2, 2.2, 3.2]])
    ticks, bars, positions = _draw(chromium_page, sigma_interval_figure(NUMERIC_LOOKING, S))
    assert ticks == NUMERIC_LOOKING and positions == 3


@pytest.mark.browser
def test_browser_draws_the_exact_name_in_plotly(chromium_page):
    ticks, bars, positions = _draw(chromium_page, noise_figure([GENE, "x"], {"NV": np.array([1.0, 2.0])}))
    assert ticks == [GENE, "x"]  # escaped once: plotly decodes it back, no "&lt;" on screen


@pytest.mark.browser
def test_browser_graph_label_and_tooltip_are_the_exact_name(chromium_page):
    page = chromium_page
    W = np.array([[0.0, 0.7], [0.0, 0.0]])
    page.set_content(graph_html(W, [GENE, "1.0"]), wait_until="load")
    page.wait_for_function("() => typeof network !== 'undefined' && network.body.data.nodes.length === 2",
                           timeout=20_000)
    labels = page.evaluate("() => network.body.data.nodes.get().map(n => n.label)")
    assert labels == [GENE, "1.0"]
    # hover the first node so vis-network builds its tooltip, and read the text it shows
    pos = page.evaluate("() => network.canvasToDOM(network.getPositions([0])[0])")
    box = page.locator("#mynetwork").bounding_box()
    page.mouse.move(box["x"] + pos["x"], box["y"] + pos["y"])
    page.wait_for_function("() => { const t = document.querySelector('div.vis-tooltip');"
                           " return t && t.style.visibility !== 'hidden' && t.innerText.length > 0; }",
                           timeout=10_000)
    tip = page.evaluate("() => document.querySelector('div.vis-tooltip').innerText")
    assert tip == GENE
