"""The live Learn page and the app's navigation, in a real browser (issue 25, parts 1 and 6).

* Moving the λ slider on Sachs redraws the graphs with no Run click, and the numbers shown are
  those of a direct library fit at the new λ.
* At 1280×720 (a projector) the λ slider and the graphs are on screen together: the element
  boxes are measured; each drawing fills its frame with labels of at least 11 px, and loads
  vis-network from the app's static folder instead of inlining it.
* At d = 50 the Graph tab shows one drawing at a time: clicking "Ground truth" in the Show switch
  draws the truth with the same node positions.
* A deep link (``/learn``) opened first on a freshly started server shows the app's own
  navigation (titles, material icons), not Streamlit's list of ``pages/`` file names, and no
  request leaves 127.0.0.1 (icons and favicon are served locally).
"""
import re

from playwright.sync_api import expect

from tests.e2e.harness import (
    ARTIFACTS, FIT_TIMEOUT_MS, UI_TIMEOUT_MS, StreamlitServer, block_external, drawings, graph_frame, labelled_frame, lambda_slider, library_result,
    no_exception_shown, open_app_with_sachs, set_lambda, shown_metric, wait_for_drawing, wait_for_idle,
)

from dashboard.infra.nav import PAGES  # noqa: E402 - the one table of pages

TITLES = [title for _, title, _ in PAGES]
assert TITLES[:2] == ["Data", "Learn"] and "Predict" in TITLES


#: In a drawing's frame: its edges as drawn, (from, to) pairs in order.
_EDGES_JS = "() => edges.get().map(e => [e.from, e.to]).sort((a, b) => a[0] - b[0] || a[1] - b[1])"


def _wait_for_lambda(page, lam):
    page.get_by_text(f"CoLiDE-NV · λ = {lam:.3g}", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
    page.get_by_text(f"CoLiDE-EV · λ = {lam:.3g}", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
    no_exception_shown(page)


def _open_learn(context, server):
    page = context.new_page()
    open_app_with_sachs(page, server.url)
    page.get_by_role("link", name="Learn", exact=True).click(timeout=UI_TIMEOUT_MS)
    _wait_for_lambda(page, 0.05)   # live: the graphs are there without a Run click
    return page


def test_moving_lambda_redraws_the_graph_without_run(server, browser):
    attempted, errors = [], []
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    block_external(context, server.url, attempted)
    try:
        page = _open_learn(context, server)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        edges_lib = library_result("nv", 0.05)[1]
        page.get_by_text(f"{edges_lib} edges ·").first.wait_for(timeout=UI_TIMEOUT_MS)
        first = labelled_frame(page, "CoLiDE-EV · λ = 0.05")
        edges_before = first.evaluate(_EDGES_JS)
        set_lambda(page, 0.5)                     # no Run click anywhere in this test
        _wait_for_lambda(page, 0.5)
        # the same document, redrawn in place (the long-lived drawing, issue 41): no new page
        wait_for_drawing(first, "CoLiDE-EV · λ = 0.5")
        # the captions under the EV and NV drawings give the edge counts of a library fit at 0.5
        for variant in ("ev", "nv"):
            n_edges = library_result(variant, 0.5)[1]
            page.get_by_text(f"{n_edges} edges ·").first.wait_for(timeout=UI_TIMEOUT_MS)
        assert library_result("nv", 0.5)[1] != edges_lib
        assert first.evaluate(_EDGES_JS) != edges_before   # the drawing itself changed
        assert first.evaluate("() => colideDrawn") >= 2
        page.get_by_role("tab", name="Metrics").click(timeout=UI_TIMEOUT_MS)
        assert shown_metric(page, "Edges · NV") == library_result("nv", 0.5)[1]
        assert shown_metric(page, "Edges · EV") == library_result("ev", 0.5)[1]
        page.screenshot(path=str(ARTIFACTS / "learn_live_lambda_0.5.png"))
    finally:
        context.close()
    assert attempted == [], attempted
    assert errors == [], errors


#: In the drawing's frame: the nodes' box on screen (CSS px), the frame's size, and the labels' size
#: on screen (font in drawing units times vis-network's zoom).
_DRAWN_BOX_JS = """() => {
    const p = network.getPositions(), ids = Object.keys(p);
    const pts = ids.map(k => network.canvasToDOM(p[k]));
    const xs = pts.map(q => q.x), ys = pts.map(q => q.y);
    const fonts = nodes.get().map(n => n.font.size * network.getScale());
    return {left: Math.min(...xs), right: Math.max(...xs), top: Math.min(...ys), bottom: Math.max(...ys),
            w: window.innerWidth, h: window.innerHeight, font: Math.min(...fonts)};
}"""


def test_slider_and_graph_on_screen_together_at_1280x720(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    requests = []
    context.on("request", lambda r: requests.append(r.url))
    try:
        page = _open_learn(context, server)
        # the page is laid out: its script run has ended and the first drawing has run its scripts
        # (vis-network's, then the one that fits the graph to the frame)
        wait_for_idle(page)
        frame = graph_frame(drawings(page).first)
        page.evaluate("window.scrollTo(0, 0)")
        page.wait_for_function("() => window.scrollY === 0", timeout=UI_TIMEOUT_MS)
        slider = lambda_slider(page).bounding_box()
        graph = drawings(page).first.bounding_box()
        drawn = frame.evaluate(_DRAWN_BOX_JS)
        # each drawing is the long-lived component's page (loaded once, redrawn in place), not a srcdoc
        docs = page.evaluate("""() => [...document.querySelectorAll('iframe')].filter(f => f.closest('[data-testid="stTabPanel"], [role="tabpanel"]'))
                                      .map(f => [f.getAttribute('data-testid'), (f.srcdoc || '').length])""")
        page.screenshot(path=str(ARTIFACTS / "learn_sachs_1280x720.png"))
        assert slider is not None and graph is not None
        # the whole slider is in the viewport ...
        assert 0 <= slider["y"] and slider["y"] + slider["height"] <= 720, slider
        # ... and so is a real part of the graph (at least 200 px of it), below the controls
        assert graph["y"] >= slider["y"] + slider["height"], (slider, graph)
        assert graph["y"] + 200 <= 720, graph
        assert graph["x"] >= 0 and graph["x"] + graph["width"] <= 1280, graph
    finally:
        context.close()
    # the drawing fills its frame: the nodes span most of its width or height, centred (the
    # margins left are the labels' and edges' room), not a small graph in the lower half
    span_x = (drawn["right"] - drawn["left"]) / drawn["w"]
    span_y = (drawn["bottom"] - drawn["top"]) / drawn["h"]
    assert max(span_x, span_y) > 0.6, drawn
    assert abs(drawn["top"] - (drawn["h"] - drawn["bottom"])) < 0.1 * drawn["h"], drawn
    # labels readable on a projector: at least 11 px on screen (Sachs, 3 drawings side by side)
    assert drawn["font"] >= 11, drawn
    # vis-network is loaded by each drawing's document once (the browser caches the file), never
    # inlined: the three drawings are the component's page, with no srcdoc
    assert docs == [["stCustomComponentV1", 0]] * 3, docs
    assert any(re.search(r"/component/dashboard\.graphview\.colide_drawing/vis-network\.min\.js$", u) for u in requests)


def test_deep_link_on_a_fresh_server_shows_the_apps_navigation(browser):
    attempted = []
    with StreamlitServer(log_name="e2e_deep_link.log") as fresh:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        block_external(context, fresh.url, attempted)
        try:
            page = context.new_page()
            page.goto(fresh.url + "/learn", timeout=UI_TIMEOUT_MS)  # the first request this server sees
            page.get_by_text("Learn a DAG with CoLiDE").wait_for(timeout=UI_TIMEOUT_MS)
            no_exception_shown(page)
            sidebar = page.get_by_test_id("stSidebar")
            for title in TITLES:
                sidebar.get_by_role("link", name=title, exact=True).wait_for(timeout=UI_TIMEOUT_MS)
            # Streamlit's automatic page list (file names, an "app" entry) is not there
            assert page.get_by_test_id("stSidebarNav").count() == 0
            assert sidebar.get_by_role("link", name="app", exact=True).count() == 0
            assert sidebar.get_by_role("link", name="learn", exact=True).count() == 0
            # every link has its material icon, drawn with the font Streamlit serves itself
            icons = sidebar.get_by_test_id("stPageLink").get_by_test_id("stIconMaterial")
            assert icons.count() == len(TITLES)
            font_ok = page.evaluate("""() => document.fonts.check('24px "Material Symbols Rounded"')""")
            assert font_ok
            page.screenshot(path=str(ARTIFACTS / "deep_link_learn.png"))
            # and the links work from there
            sidebar.get_by_role("link", name="Data", exact=True).click(timeout=UI_TIMEOUT_MS)
            page.get_by_role("button", name="Use the Sachs data").wait_for(timeout=UI_TIMEOUT_MS)
            no_exception_shown(page)
        finally:
            context.close()
    assert attempted == [], attempted


_NODES_JS = "() => nodes.get().map(n => [n.label, n.x, n.y])"


def test_fifty_nodes_switch_between_drawings_in_place(server, browser):
    # d = 50 three-up would shrink labels below 10 px (graph_style.per_row), so the Graph tab shows
    # one drawing and a "Show" switch: a real click on "Ground truth" must draw the truth in the same
    # node positions, the switch keeping its value across the rerun it triggers
    attempted = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    block_external(context, server.url, attempted)
    try:
        page = context.new_page()
        open_app_with_sachs(page, server.url)
        page.get_by_role("link", name="Simulate").click(timeout=UI_TIMEOUT_MS)
        box = page.get_by_role("spinbutton", name="Nodes d")
        box.wait_for(timeout=UI_TIMEOUT_MS)
        box.fill("50", timeout=UI_TIMEOUT_MS)
        box.press("Enter")
        # Enter applies d = 50 (the box's "Press Enter to apply" goes once it has), so the Simulate
        # click below sends it
        expect(page.get_by_test_id("stNumberInput").filter(has=box).get_by_text("Press Enter to apply")) \
            .to_have_count(0, timeout=UI_TIMEOUT_MS)
        page.get_by_role("button", name="Simulate").click(timeout=UI_TIMEOUT_MS)
        page.get_by_text("The simulated dataset is now the current dataset").wait_for(timeout=UI_TIMEOUT_MS)
        # the Simulate page draws the true graph with the same long-lived drawing: 50 nodes, in one colour
        simulated = graph_frame(drawings(page).first, "() => typeof network !== 'undefined' && nodes.length === 50")
        sim_colours = simulated.evaluate("() => [...new Set(edges.get().map(e => e.color.color || e.color))]")
        page.get_by_role("link", name="Learn", exact=True).click(timeout=UI_TIMEOUT_MS)
        page.get_by_text("CoLiDE-NV · λ = 0.05", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
        # the heading comes before the drawing in the same run: wait for that run to end, then read
        wait_for_idle(page)
        panel = page.get_by_role("tabpanel", name="Graph")
        expect(drawings(panel)).to_have_count(1, timeout=UI_TIMEOUT_MS)
        frame = graph_frame(drawings(panel).first)
        wait_for_drawing(frame, "CoLiDE-NV · λ = 0.05")
        nv = frame.evaluate(_NODES_JS)

        page.get_by_role("radiogroup", name="Show").get_by_role("radio", name="Ground truth", exact=True).click(
            timeout=UI_TIMEOUT_MS)
        # the rerun shows the truth's heading in the panel instead of NV's, then its drawing
        panel.get_by_test_id("stMarkdown").get_by_text("Ground truth", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
        page.get_by_text("CoLiDE-NV · λ = 0.05", exact=True).wait_for(state="detached", timeout=UI_TIMEOUT_MS)
        wait_for_idle(page)
        expect(drawings(panel)).to_have_count(1, timeout=UI_TIMEOUT_MS)
        frame = graph_frame(drawings(panel).first)
        wait_for_drawing(frame, "Ground truth")   # the truth's drawing, not NV's still shown
        truth = frame.evaluate(_NODES_JS)
        colours = frame.evaluate("() => [...new Set(edges.get().map(e => e.color.color || e.color))]")
        no_exception_shown(page)
        page.screenshot(path=str(ARTIFACTS / "learn_d50_truth.png"))
    finally:
        context.close()
    assert len(nv) == 50 and truth == nv           # same nodes at the same places
    assert colours == ["#1f77b4"]                  # the truth, drawn in one colour (not against itself)
    assert sim_colours == colours                  # ... as on the Simulate page
    assert attempted == [], attempted


def test_auto_draws_the_fast_answer_then_the_refined_one_without_a_click(server, browser):
    """Issue 51: above 20 nodes the live page draws the fast solver's answer at once, says
    "Refining", and replaces it with solver auto's answer when the order search is done, with no
    click (the fragment's poll reruns the page). Waits on the page's texts, never on time."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{server.url}/learn?data=sim&d=30&n=600&seed=1&model=NV", timeout=UI_TIMEOUT_MS)
        page.get_by_text("CoLiDE-NV · λ = 0.05", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
        refined = page.get_by_text(re.compile(r"^auto: "))
        refining = page.get_by_text("Refining", exact=False)
        # the fast answer first (its caption), or already refined on a fast machine
        expect(page.get_by_text(re.compile(r"^(fast solver|auto: )")).first).to_be_visible(timeout=UI_TIMEOUT_MS)
        expect(refined.first).to_be_visible(timeout=FIT_TIMEOUT_MS)   # the refined fit, drawn by itself
        expect(refining).to_have_count(0, timeout=UI_TIMEOUT_MS)
        no_exception_shown(page)
    finally:
        context.close()


def test_a_banner_that_comes_and_goes_above_the_drawing_does_not_reload_it(server, browser):
    """Issue 48 m-11: a banner inserted above a drawing (a job's progress bar, its "finished"
    message, "Refining", a stale warning) moved the drawings' place in the page, and the browser
    remounted their frames: a full vis-network reload, and a frame a test held went dead (the CI
    failures of stops 53 and 54: a remounted frame is detached). Now everything that comes and goes
    above the drawings lives in containers made on every run. Deterministic trigger: Run on live
    Sachs shows a job's bar, then its message, above the drawings. A mark set in the EV drawing's
    window before the click is still there after both: the same document."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = _open_learn(context, server)
        wait_for_idle(page)
        frame = labelled_frame(page, "CoLiDE-EV · λ = 0.05")
        frame.evaluate("() => { window.colideMark = 'before'; }")
        page.get_by_role("button", name="Run", exact=True).click(timeout=UI_TIMEOUT_MS)
        # the job's message, written above the drawings by the run after the job (its bar came before)
        page.get_by_text(re.compile(r"^(EV|NV) finished:")).first.wait_for(timeout=FIT_TIMEOUT_MS)
        wait_for_idle(page)
        assert not frame.is_detached(), "the drawing's frame was remounted by the banner above it"
        assert frame.evaluate("() => window.colideMark") == "before"  # the same document, not reloaded
        assert frame.evaluate("() => colideDrawn") >= 1
        no_exception_shown(page)
    finally:
        context.close()
