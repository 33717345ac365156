"""Playback in a real browser: one Sachs fit, two checkpoints, two different drawn graphs.

Flow: Sachs -> Learn -> CoLiDE-NV (λ = 0.05) -> Run -> Playback tab -> "Record and play back this
fit". The graph shown for a checkpoint is the vis-network drawing inside the tab's iframe; its
edges are read from ``network.body.data.edges`` (what vis-network really draws) at the first
checkpoint and, after pressing End on the checkpoint slider, at the last one. At the first
checkpoint (after 1000 steps of stage 1, μ = 1) no weight passes the 0.3 threshold yet, so only the
17 true edges are drawn, all as "missing"; at the last one the fit's learned edges are drawn. The
sets must differ and match the library's own recorded fit. Then Play, clicked inside the drawing,
plays the checkpoints by itself (in the browser) up to the last one and stops.
"""
import re

import numpy as np

from tests.e2e.harness import (
    ARTIFACTS,
    UI_TIMEOUT_MS,
    block_external,
    graph_frame,
    no_exception_shown,
    open_app_with_sachs,
    start_fit,
    wait_for_result,
)

JS_EDGES = """() => (typeof network === 'undefined') ? null
    : network.body.data.edges.get().map(e => [e.from, e.to, e.color && (e.color.color || e.color)])"""


def _playback_frame(page, k):
    """The playback drawing's frame once its player shows checkpoint ``k`` (-1: the last)."""
    at = "player.frames - 1" if k == -1 else str(int(k))
    return graph_frame(page.get_by_role("tabpanel", name="Playback").get_by_test_id("stIFrame").first,
                       "() => document.readyState !== 'loading' && typeof player !== 'undefined'"
                       f" && network.body.data.nodes.length > 0 && player.frame() === {at}")


#: Records, from now on, the player's checkpoint and caption each time the caption changes (the
#: player writes it on every checkpoint it shows).
_RECORD_JS = """() => {
    window.__played = [];
    const cap = document.getElementById('caption');
    new MutationObserver(() => window.__played.push([player.frame(), cap.textContent]))
        .observe(cap, {childList: true, characterData: true, subtree: true});
}"""


def _caption(frame):
    """The caption the drawing's player shows (the one control of the Playback tab, issue 28)."""
    return frame.locator("#caption").inner_text(timeout=UI_TIMEOUT_MS)


def _expected_edges(k):
    """(from, to) of the learned (not missing) edges the library records at checkpoint k."""
    import colide_core

    X, _ = colide_core.load_sachs()
    res = colide_core.CoLiDE("nv", record_W=True).fit(X).result_
    Ws = res.W_history
    k = k % len(Ws)
    A = colide_core.threshold_to_dag(Ws[k], 0.3)
    return len(Ws), {(int(i), int(j)) for i, j in zip(*np.nonzero(A))}


def test_playback_draws_two_distinct_graphs_of_one_fit(server, browser):
    attempted, errors = [], []
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    block_external(context, server.url, attempted)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        open_app_with_sachs(page, server.url)
        start_fit(page, "nv", 0.05)
        wait_for_result(page, "nv", 0.05)
        page.get_by_role("tab", name="Playback").click(timeout=UI_TIMEOUT_MS)
        page.get_by_text("Record and play back this fit").click(timeout=UI_TIMEOUT_MS)
        frame = _playback_frame(page, 0)
        first_caption = _caption(frame)
        first = frame.evaluate(JS_EDGES)
        page.screenshot(path=str(ARTIFACTS / "playback_first.png"), full_page=True)
        # one control: no Streamlit slider beside the drawing's own player
        assert page.get_by_role("tabpanel", name="Playback").get_by_role("slider").count() == 0

        # jump to the last checkpoint with the keyboard on the player's slider (in the drawing)
        frame.locator("#frame").focus()
        frame.locator("#frame").press("End")
        frame.wait_for_function("() => player.frame() === player.frames - 1", timeout=UI_TIMEOUT_MS)
        last_caption = _caption(frame)
        last = frame.evaluate(JS_EDGES)
        page.screenshot(path=str(ARTIFACTS / "playback_last.png"), full_page=True)

        # Play, clicked in the drawing: from the last checkpoint it starts again at the first and
        # plays through to the last by itself (fast: 12 checkpoints a second), then stops
        frame.locator("#speed").select_option("12")
        frame.evaluate(_RECORD_JS)
        frame.get_by_role("button", name="Play").click(timeout=UI_TIMEOUT_MS)
        # the click has started the player (at the first checkpoint): wait until it has stopped by
        # itself on the last one, having shown at least one other
        frame.wait_for_function("() => !player.playing() && player.frame() === player.frames - 1"
                                " && window.__played.length > 1", timeout=UI_TIMEOUT_MS)
        played = frame.evaluate("() => window.__played")
        seen, caption_seen = [k for k, _ in played], {c for _, c in played}
        played_last = frame.evaluate(JS_EDGES)
        frame.get_by_role("button", name="Play").wait_for(timeout=UI_TIMEOUT_MS)  # label back to Play
        no_exception_shown(page)
    finally:
        context.close()

    n, expected_first = _expected_edges(0)
    _, expected_last = _expected_edges(-1)
    assert first_caption.startswith(f"Checkpoint 1 of {n}:"), first_caption
    assert last_caption.startswith(f"Checkpoint {n} of {n}:"), last_caption
    missing = "#7f7f7f"  # colide_core.render.graph_html.EDGE_STYLES["missing"]
    drawn_first = {(int(a), int(b)) for a, b, c in first if c != missing}
    drawn_last = {(int(a), int(b)) for a, b, c in last if c != missing}
    assert drawn_first == expected_first
    assert drawn_last == expected_last
    assert sorted(map(tuple, first)) != sorted(map(tuple, last))  # two distinct graphs of one fit
    assert len(drawn_last) > len(drawn_first)
    # the animation advanced by itself through many checkpoints, in order, and ended on the last
    assert seen[-1] == n - 1, seen
    assert len(set(seen)) >= 10 and seen[1:] == sorted(seen[1:]), seen
    assert len(caption_seen) >= 10 and f"Checkpoint {n} of {n}:" in " ".join(caption_seen)
    assert sorted(map(tuple, played_last)) == sorted(map(tuple, last))
    assert attempted == [] and errors == [], (attempted, errors)
