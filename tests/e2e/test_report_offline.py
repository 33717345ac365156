"""The HTML report (colide_core.render.report) opens in headless chromium with every network request
blocked, draws the interactive graph and its figures, and raises no script error."""
import colide_core
from colide_core.render import report
from colide_core.run.manifest import build_manifest
from tests.e2e.harness import block_external

TIMEOUT_MS = 60_000


def test_report_opens_offline_and_shows_the_graph(browser, tmp_path):
    X, B = colide_core.load_sachs()
    model = colide_core.CoLiDE("nv").fit(X)
    fit = report.ReportFit("NV", model.W_, model.adjacency_, model.sigma_, model.get_params(),
                           build_manifest(model, X))
    html = report.build_report(X, [fit], dataset_name="Sachs", B_true=B,
                               checks=colide_core.evaluation.checks.run_checks(X, model.adjacency_, W=model.W_, n_random=20))
    target = tmp_path / "report.html"
    report.write_report(target, html)

    attempted, errors = [], []
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    block_external(context, tmp_path.as_uri(), attempted)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(target.as_uri())
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 8", timeout=TIMEOUT_MS)
        # Chromium does not render a cross-origin (sandboxed) frame that is out of view: scroll to it.
        page.locator("iframe.graph").first.scroll_into_view_if_needed()
        frame = page.frame_locator("iframe.graph").first
        frame.locator("div.vis-network canvas").wait_for(timeout=TIMEOUT_MS)
        (graph_frame,) = [f for f in page.frames if f is not page.main_frame]
        painted = """() => {
            const c = document.querySelector('div.vis-network canvas');
            const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let painted = 0;
            for (let i = 3; i < img.length; i += 4) if (img[i] !== 0) painted++;
            return painted;
        }"""
        graph_frame.wait_for_function(f"({painted})() > 5000", timeout=TIMEOUT_MS)
        stats = graph_frame.evaluate(
            """() => ({nodes: network.body.data.nodes.length,
                       edges: network.body.data.edges.get().filter(e => !e.dashes).length,
                       labels: network.body.data.nodes.get().map(n => n.label)})""")
        assert stats["nodes"] == 11 and stats["labels"] == list(colide_core.SACHS_NODES)
        # every learned edge is drawn (missing true edges are the dashed ones)
        assert stats["edges"] == int((model.adjacency_ != 0).sum())
        assert "Markov check" in page.inner_text("body")
    finally:
        context.close()
    assert attempted == []
    assert errors == []
