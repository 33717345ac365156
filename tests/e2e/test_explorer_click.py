"""The Explorer's heatmap, clicked in a real browser (issue 25, point 1).

A unit test that fed ``cell_from_selection`` a hand-made selection passed while the real click
crashed: Streamlit 1.67 hands a point's ``customdata`` back as ``{"0": i, "1": j}`` when plotly
serialised it as a typed array. Only a browser shows what Streamlit really returns, so this test
solves the λ path on Sachs, clicks one heatmap cell with the mouse at the pixel where plotly drew
it, and checks that the page shows no traceback and that the graph below moved to that cell.
"""
from tests.e2e.harness import (
    ARTIFACTS, UI_TIMEOUT_MS, block_external, drawings, graph_frame, no_exception_shown, open_app_with_sachs,
    wait_for_drawing, wait_for_idle,
)

PATH_TIMEOUT_MS = 180_000

# Pixel centre of the heatmap cell (lambda label, threshold label), from plotly's own axes.
_CELL_CENTRE_JS = """([y, x]) => {
    const plots = [...document.querySelectorAll('.js-plotly-plot')]
        .filter(p => p._fullLayout && p._fullLayout.yaxis && p._fullLayout.yaxis.type === 'category');
    const gd = plots[plots.length - 1];
    if (!gd) return null;
    const L = gd._fullLayout, r = gd.querySelector('.nsewdrag').getBoundingClientRect();
    return {x: r.left + L.xaxis.d2p(x), y: r.top + L.yaxis.d2p(y),
            xs: L.xaxis._categories, ys: L.yaxis._categories};
}"""


def _slider_value(page, label):
    """The value shown on the thumb of the select_slider labelled ``label``."""
    slider = page.get_by_test_id("stSlider").filter(has=page.get_by_text(label, exact=True))
    return slider.get_by_test_id("stSliderThumbValue").inner_text(timeout=UI_TIMEOUT_MS).strip()


def test_clicking_a_heatmap_cell_shows_that_graph(server, browser):
    attempted, errors = [], []
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    block_external(context, server.url, attempted)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        open_app_with_sachs(page, server.url)
        page.get_by_role("link", name="Explorer").click(timeout=UI_TIMEOUT_MS)
        page.get_by_role("button", name="Run λ path").click(timeout=UI_TIMEOUT_MS)
        page.get_by_text("Graph of the selected cell").wait_for(timeout=PATH_TIMEOUT_MS)
        no_exception_shown(page)
        # before the click the selected cell is the paper's default, λ nearest 0.05
        before = _slider_value(page, "λ")
        heat = page.locator(".js-plotly-plot").last
        heat.scroll_into_view_if_needed(timeout=UI_TIMEOUT_MS)
        probe = page.evaluate(_CELL_CENTRE_JS, ["0.005", "0.1"])
        assert probe is not None and "0.005" in probe["ys"] and "0.1" in probe["xs"], probe
        page.mouse.click(probe["x"], probe["y"])
        # the rerun after the click: the cell's λ appears on the slider below the heatmap
        # (or the traceback of a crash, which no_exception_shown then reports)
        # (the cell's own λ slider: the λ-range slider above also shows 0.005, on its left thumb)
        page.wait_for_function(
            """() => document.querySelector('[data-testid="stException"]') ||
                     [...document.querySelectorAll('[data-testid="stSlider"]')]
                      .filter(s => [...s.querySelectorAll('label, p')].some(l => l.innerText.trim() === 'λ'))
                      .some(s => [...s.querySelectorAll('[data-testid="stSliderThumbValue"]')]
                                 .some(e => e.innerText.trim() === '0.005'))""", timeout=UI_TIMEOUT_MS)
        wait_for_idle(page)  # that rerun has ended: both sliders below the heatmap are drawn
        no_exception_shown(page)
        after_lambda, after_threshold = _slider_value(page, "λ"), _slider_value(page, "threshold")
        # the graph below is that cell's: its drawing (redrawn in place) holds as many edges as
        # the cell's "Edges" metric says
        frame = graph_frame(drawings(page).last)
        wait_for_drawing(frame, "λ = 0.005, threshold 0.1")
        drawn_edges = frame.evaluate("() => edges.get().filter(e => !e.dashes).length")
        metric = page.get_by_test_id("stMetric").filter(
            has=page.get_by_test_id("stMetricLabel").get_by_text("Edges", exact=True))
        shown_edges = int(metric.get_by_test_id("stMetricValue").inner_text(timeout=UI_TIMEOUT_MS).strip())
        page.screenshot(path=str(ARTIFACTS / "explorer_after_click.png"), full_page=True)
    finally:
        context.close()
    assert before != "0.005"
    assert (after_lambda, after_threshold) == ("0.005", "0.1")
    assert drawn_edges == shown_edges > 0
    assert attempted == [], attempted
    assert errors == [], errors
