"""End to end in a real browser: ``streamlit run app.py`` on a free localhost port, driven by Debian's
headless chromium through Playwright, with every non-localhost request aborted (so a CDN dependency
would break the graph, and any attempt is recorded and fails the test).

Flow: Data page -> "Use the Sachs data" -> Learn -> CoLiDE-NV (lambda 0.05) -> Run; then the
vis-network canvas inside the graph iframe must be drawn with the 11 Sachs nodes, and the SHD shown
must equal a direct ``colide_core`` fit's. Screenshots go to tests/e2e/artifacts/ (git-ignored).
"""
import re

from tests.e2e.harness import (
    ARTIFACTS,
    StreamlitServer,
    block_external,
    drawings,
    graph_frame,
    library_shd,
    no_exception_shown,
    open_app_with_sachs,
    shown_shd,
    start_fit,
    wait_for_idle,
    wait_for_result,
)

GRAPH_TIMEOUT_MS = 60_000
#: True once the vis-network canvas has any painted (not transparent) pixel.
_PAINTED_JS = """() => {
    const c = document.querySelector('div.vis-network canvas');
    if (!c || !c.width || !c.height) return false;
    const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < img.length; i += 4) if (img[i] !== 0) return true;
    return false;
}"""


def _canvas_stats(frame):
    """Size of the vis-network canvas and how many of its pixels are painted (not transparent)."""
    return frame.evaluate(
        """() => {
            const c = document.querySelector('div.vis-network canvas');
            if (!c) return null;
            const ctx = c.getContext('2d');
            const img = ctx.getImageData(0, 0, c.width, c.height).data;
            let painted = 0;
            for (let i = 3; i < img.length; i += 4) if (img[i] !== 0) painted++;
            return {w: c.width, h: c.height, painted: painted,
                    nodes: (typeof network !== 'undefined') ? network.body.data.nodes.length : -1,
                    edges: (typeof network !== 'undefined') ? network.body.data.edges.length : -1,
                    labels: (typeof network !== 'undefined')
                        ? network.body.data.nodes.get().map(n => n.label) : [],
                    vis: typeof vis !== 'undefined'};
        }"""
    )


def test_sachs_nv_offline_graph_and_shd(server, browser):
    import colide_core

    attempted = []
    errors = []
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    block_external(context, server.url, attempted)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        open_app_with_sachs(page, server.url)
        start_fit(page, "nv", 0.05)
        wait_for_result(page, "nv", 0.05)
        # Sachs is live, so the result was already drawn before Run: wait for the Run job's own
        # message, then for the end of the script run that shows it, after which the page stops
        # re-rendering the drawings
        page.get_by_text(re.compile(r"^NV finished: .*the last stage converged")).wait_for(timeout=GRAPH_TIMEOUT_MS)
        wait_for_idle(page, GRAPH_TIMEOUT_MS)

        # The Graph tab is the first tab: its iframe holds the pyvis page with vis-network inlined.
        iframe = drawings(page).first
        iframe.wait_for(timeout=GRAPH_TIMEOUT_MS)
        frame = graph_frame(iframe, timeout_ms=GRAPH_TIMEOUT_MS)
        frame.locator("div.vis-network canvas").wait_for(timeout=GRAPH_TIMEOUT_MS)
        # vis-network has drawn: a frame is painted whole in one animation-frame callback, so once
        # any pixel of the canvas is painted the first drawing is complete
        frame.wait_for_function(_PAINTED_JS, timeout=GRAPH_TIMEOUT_MS)
        stats = _canvas_stats(frame)
        iframe.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "sachs_nv_learn_page.png"), full_page=True)
        iframe.screenshot(path=str(ARTIFACTS / "sachs_nv_graph.png"))

        shd = shown_shd(page, "nv")
        page.screenshot(path=str(ARTIFACTS / "sachs_nv_metrics.png"), full_page=True)
        no_exception_shown(page)
    finally:
        context.close()

    # the graph really rendered, from the inlined library, with the 11 Sachs proteins as nodes
    assert stats is not None and stats["vis"], stats
    assert stats["w"] > 200 and stats["h"] > 200, stats
    assert stats["painted"] > 2000, stats
    assert stats["nodes"] == 11 and stats["edges"] > 0, stats
    assert sorted(stats["labels"]) == sorted(colide_core.SACHS_NODES)
    # the SHD on the page is the library's
    assert shd == library_shd("nv", 0.05)
    # nothing was fetched from anywhere but the local server (no CDN, no fonts, no telemetry)
    assert attempted == [], attempted
    assert errors == [], errors


def test_first_visit_straight_to_learn_page_shows_no_traceback(browser):
    # A browser tab left open on /learn reconnects there after a server restart: the first script run
    # of a fresh server is then the Learn page, not app.py. It must still get an initialised session.
    with StreamlitServer(log_name="e2e_deeplink_streamlit.log") as srv:
        attempted = []
        context = browser.new_context()
        block_external(context, srv.url, attempted)
        page = context.new_page()
        try:
            page.goto(srv.url + "/learn", timeout=60_000)
            # the live page's graphs (Sachs is live: no Run needed), or a traceback
            page.get_by_text("CoLiDE-NV · λ = 0.05", exact=True).or_(
                page.get_by_test_id("stException")).first.wait_for(timeout=60_000)
            page.screenshot(path=str(ARTIFACTS / "deeplink_learn.png"))
            no_exception_shown(page)
            # state initialised by the page's own set-up: the default dataset is Sachs
            assert page.get_by_text(re.compile(r"^Sachs \(CD3/CD28.*Live")).count() == 1
        finally:
            context.close()
        assert attempted == [], attempted
