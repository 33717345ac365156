"""The Predict page's "Which experiment next?" in a real browser (issue 40).

AppTest (tests/test_app_predict.py) checks the ranking, the highlight and "Run it" against the
library from the session state; only a browser shows that the ranking job ends on the page, that
the drawing the user sees marks the settled edges, and that "Run it" reports its result.

* On the default data (Sachs, with the Learn page's live fits), the planning job ranks the
  experiments, and the drawing below the ranking haloes exactly the learned edges whose
  direction the best experiment settles (the library's ranking with the Learn fit's settings,
  computed here). Sachs has no true SEM, so the page offers no "Run it" there.
* "Run it" needs a true SEM: on a simulated dataset (opened by a link), the planning job, then
  "Run it", whose SHD before and after (and the node it intervened on) are those of the library's
  ranking and :func:`dashboard.planning.try_experiment`, computed here.

Every wait is on a condition (Playwright's ``wait_for`` / ``expect`` and :func:`graph_frame`).
"""
import re
from dataclasses import replace

from playwright.sync_api import expect

from colide_core.render.graph_style import EDGE_STYLES, SETTLED_STYLE, contrast_ratio, label_colour

from tests.e2e.harness import (
    ARTIFACTS, FIT_TIMEOUT_MS, GRAPH_READY_JS, UI_TIMEOUT_MS, block_external, drawings, graph_frame, no_exception_shown,
    open_app_with_sachs, wait_for_idle,
)

#: The drawing holds a haloed edge (graph_html's mark of the chosen experiment's edges, issue 48 m-2).
SETTLED_JS = (f"() => ({GRAPH_READY_JS})() && network.body.data.edges.get()"
              ".some(e => !!(e.shadow && e.shadow.enabled))")
#: The haloed edges, as [source name, target name, colour, label].
SETTLED_EDGES_JS = """() => {
    const name = {};
    network.body.data.nodes.get().forEach(n => { name[n.id] = n.label; });
    return network.body.data.edges.get()
        .filter(e => !!(e.shadow && e.shadow.enabled))
        .map(e => [name[e.from], name[e.to], e.color, e.label || '']);
}"""
#: Each node's fill and the label colour vis-network draws it with (after any resize of the labels).
NODE_LABELS_JS = """() => network.body.data.nodes.get()
    .map(n => [String(n.color), String(network.body.nodes[n.id].options.font.color)])"""
LAMBDA1, THRESHOLD = 0.05, 0.3  # the Learn page's defaults, which the Predict page's fit used
PLAN_RESAMPLES = 20  # the planning job's default "Resamples"
TRY_ROWS = 500  # the default "Rows of the experiment"


def _library_plan(X):
    """The Learn NV fit's thresholded graph and the page's ranking, made with the library."""
    import colide_core
    from colide_core.evaluation.planning import rank_interventions

    A = colide_core.threshold_to_dag(colide_core.CoLiDE("nv", lambda1=LAMBDA1).fit(X).W_, THRESHOLD)
    ranking = rank_interventions(X, n_bootstrap=PLAN_RESAMPLES, random_state=0,
                                 estimator=colide_core.CoLiDE("nv", lambda1=LAMBDA1, threshold=THRESHOLD))
    return A, ranking


def _open_predict_and_rank(page, n_nodes):
    """From a page with the Learn fits made: the Predict page, its planning job (default resamples),
    its ranking shown."""
    page.get_by_role("link", name="Predict").click(timeout=UI_TIMEOUT_MS)
    rank = page.get_by_role("button", name="Rank the experiments")
    rank.wait_for(timeout=UI_TIMEOUT_MS)
    wait_for_idle(page)
    no_exception_shown(page)
    rank.click(timeout=UI_TIMEOUT_MS)
    # the job's message, then the ranking's own controls below it
    page.get_by_text(re.compile(rf"^Ranked {n_nodes} candidates on {PLAN_RESAMPLES} refits in ")).wait_for(
        timeout=FIT_TIMEOUT_MS)
    page.get_by_text("Show the edges settled by an intervention on").wait_for(timeout=UI_TIMEOUT_MS)
    wait_for_idle(page)
    no_exception_shown(page)


def _picked(page):
    """The node chosen in the selectbox "Show the edges settled by an intervention on"."""
    return page.get_by_role("combobox", name="Show the edges settled by an intervention on").input_value(
        timeout=UI_TIMEOUT_MS)


def _new_page(browser, server, attempted, errors):
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    block_external(context, server.url, attempted)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return context, page


def test_the_ranking_highlights_the_edges_the_best_experiment_settles_on_sachs(server, browser):
    import colide_core

    attempted, errors = [], []
    context, page = _new_page(browser, server, attempted, errors)
    try:
        open_app_with_sachs(page, server.url)
        page.get_by_role("link", name="Learn", exact=True).click(timeout=UI_TIMEOUT_MS)
        # the live fits of the default λ (EV and NV) are made in this run; idle: both are held
        page.get_by_text(re.compile(rf"^CoLiDE-(EV|NV) · λ = {LAMBDA1:g}$")).first.wait_for(timeout=FIT_TIMEOUT_MS)
        wait_for_idle(page, FIT_TIMEOUT_MS)
        _open_predict_and_rank(page, 11)
        pick = _picked(page)
        shown_drawings = drawings(page)
        expect(shown_drawings).to_have_count(2, timeout=UI_TIMEOUT_MS)  # the prediction's, then the plan's
        # issue 48 m-6: the prediction's labels are drawn in the colour that contrasts with their fill
        labels = graph_frame(shown_drawings.nth(0)).evaluate(NODE_LABELS_JS)
        assert labels and all(colour == label_colour(fill) for fill, colour in labels), labels
        assert all(contrast_ratio(fill, colour) >= 4.5 for fill, colour in labels), labels
        frame = graph_frame(shown_drawings.nth(1), SETTLED_JS)
        marked = frame.evaluate(SETTLED_EDGES_JS)
        shown = sorted((a, b) for a, b, _, _ in marked)
        # each keeps its agreement colour (correct, reversed, ... against the consensus), no label;
        # the legend names the halo
        own = {EDGE_STYLES[k][0] for k in ("correct", "reversed", "extra", "learned")}
        assert all(colour in own and label == "" for _, _, colour, label in marked), marked
        expect(frame.get_by_text(SETTLED_STYLE["text"])).to_be_visible(timeout=UI_TIMEOUT_MS)
        shown_drawings.nth(1).scroll_into_view_if_needed(timeout=UI_TIMEOUT_MS)
        page.screenshot(path=str(ARTIFACTS / "predict_plan_sachs.png"), full_page=True)
        # real data have no true SEM to draw the experiment from: no "Run it"
        expect(page.get_by_role("button", name=re.compile("^Run it"))).to_have_count(0)
        no_exception_shown(page)
    finally:
        context.close()
    X, _ = colide_core.load_sachs()
    A, ranking = _library_plan(X)
    names = [str(c) for c in X.columns]
    assert pick == ranking.index[0]
    pairs = {frozenset(p) for p in ranking.loc[pick, "edge_pairs"]}
    want = sorted((names[i], names[j]) for i in range(len(names)) for j in range(len(names))
                  if A[i, j] != 0 and frozenset((names[i], names[j])) in pairs)
    assert want, "the best experiment settles none of the learned edges: nothing to check"
    assert shown == want
    assert attempted == [], attempted
    assert errors == [], errors


def test_run_it_simulates_the_chosen_experiment_and_reports_the_refit(server, browser):
    from dashboard.planning import try_experiment
    from dashboard.simulation import SimConfig, simulate_dataset

    attempted, errors = [], []
    context, page = _new_page(browser, server, attempted, errors)
    try:
        # a simulated dataset (its true SEM known) and its live NV fit, from a link
        page.goto(server.url + "/learn?data=sim&d=6&n=300&seed=1&graph=ER&k=2&model=NV", timeout=UI_TIMEOUT_MS)
        page.get_by_text(f"CoLiDE-NV · λ = {LAMBDA1:g}", exact=True).wait_for(timeout=FIT_TIMEOUT_MS)
        page.get_by_text(re.compile(r"Simulated ER2, d=6, n=300")).first.wait_for(timeout=UI_TIMEOUT_MS)
        wait_for_idle(page, FIT_TIMEOUT_MS)
        _open_predict_and_rank(page, 6)
        pick = _picked(page)
        page.get_by_role("button", name="Run it: simulate this experiment and refit").click(timeout=UI_TIMEOUT_MS)
        result = page.get_by_text(re.compile(rf"^With {TRY_ROWS} rows of do\((.+)\): SHD (\d+) → (\d+) against the "
                                             r"true graph \(gain -?\d+\)"))
        result.wait_for(timeout=FIT_TIMEOUT_MS)
        text = result.inner_text()
        # the refit is drawn below its result (the third drawing of the page)
        shown_drawings = drawings(page)
        expect(shown_drawings).to_have_count(3, timeout=UI_TIMEOUT_MS)
        graph_frame(shown_drawings.nth(2), f"() => ({GRAPH_READY_JS})() && network.body.data.nodes.length === 6")
        wait_for_idle(page)
        no_exception_shown(page)
        page.screenshot(path=str(ARTIFACTS / "predict_plan_run_it.png"), full_page=True)
    finally:
        context.close()
    ds = simulate_dataset(replace(SimConfig(), d=6, n=300, graph="ER", degree=2.0), 1)
    A, ranking = _library_plan(ds.X)
    assert pick == ranking.index[0]
    direct = try_experiment(ds, {"variant": "nv", "lambda1": LAMBDA1}, THRESHOLD, pick, TRY_ROWS, before=A)
    # these data were chosen so that the experiment changes the SHD (measured: 4 -> 0), so that the
    # comparison below tells a shown "before" from a shown "after"
    assert direct["shd_before"] != direct["shd_after"]
    node, before, after = re.search(r"do\((.+)\): SHD (\d+) → (\d+)", text).groups()
    assert (node, int(before), int(after)) == (pick, direct["shd_before"], direct["shd_after"])
    assert attempted == [], attempted
    assert errors == [], errors
