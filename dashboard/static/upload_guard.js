(() => {
  const w = window.parent && window.parent.document ? window.parent : window;
  if (w.__colideUploadGuard) return;
  const doc = w.document, maxHoldMs = 120000, startMs = 3000, settleMs = 200;
  const g = w.__colideUploadGuard = {inFlight: 0, pickedAt: 0, lastDoneAt: 0, held: null, timer: null,
                                     valueSentAt: 0, stateAtSend: "", runStartedAt: 0, runEndedAt: 0};
  const appState = () => {
    const app = doc.querySelector("[data-testid='stApp']");
    return app ? app.getAttribute("data-test-script-state") : null;
  };
  // The upload is only safe once the server has run the script with the uploader's value: the page
  // processes the file in its on_change callback, and a page change that reaches the server while
  // that run is going on interrupts it (Streamlit checks for a new request at every session-state
  // access), so the file is dropped as unclaimed. Conditions, not times: the value is the first
  // message sent to the server after the last upload has been answered; a run that starts after it
  // has the value; the hold ends when that run has ended.
  const processed = () => {
    if (!g.valueSentAt || appState() !== "notRunning") return false;
    if (g.runStartedAt >= g.valueSentAt && g.runEndedAt >= g.runStartedAt) return true;
    // the app was already running when the value went: the server restarts that run with it
    return g.stateAtSend === "running" && g.runEndedAt >= g.valueSentAt && Date.now() - g.runEndedAt >= settleMs;
  };
  const busy = () => {
    const now = Date.now();
    if (g.inFlight > 0) return now - g.pickedAt < maxHoldMs;
    if (g.pickedAt && g.lastDoneAt < g.pickedAt) return now - g.pickedAt < startMs;  // not started yet
    if (!g.lastDoneAt || g.settled) return false;
    if (processed()) { g.settled = true; return false; }  // later runs no longer hold a link
    return now - g.lastDoneAt < maxHoldMs;
  };
  const release = () => {
    clearTimeout(g.timer);
    if (!g.held) return;
    if (busy()) { g.timer = setTimeout(release, 100); return; }
    const link = g.held; g.held = null; doc.body.style.cursor = "";
    if (link.isConnected) { g.replaying = true; try { link.click(); } finally { g.replaying = false; } }
  };
  const isUpload = (url) => String(url || "").indexOf("/_stcore/upload_file") >= 0;
  const XHR = w.XMLHttpRequest.prototype, open = XHR.open, send = XHR.send;
  XHR.open = function (method, url) {
    this.__colideUpload = String(method).toUpperCase() === "PUT" && isUpload(url);
    return open.apply(this, arguments);
  };
  XHR.send = function () {
    if (this.__colideUpload) {
      g.inFlight += 1;
      g.valueSentAt = 0; g.settled = false;
      this.addEventListener("loadend", () => { g.inFlight -= 1; g.lastDoneAt = Date.now(); }, {once: true});
    }
    return send.apply(this, arguments);
  };
  const WS = w.WebSocket.prototype, wsSend = WS.send;
  WS.send = function () {
    if (g.lastDoneAt && g.inFlight === 0 && !g.valueSentAt) { g.valueSentAt = Date.now(); g.stateAtSend = appState(); }
    return wsSend.apply(this, arguments);
  };
  const watch = () => {
    const app = doc.querySelector("[data-testid='stApp']");
    if (!app) { setTimeout(watch, 100); return; }
    new w.MutationObserver(() => {
      if (appState() === "running") g.runStartedAt = Date.now(); else g.runEndedAt = Date.now();
    }).observe(app, {attributes: true, attributeFilter: ["data-test-script-state"]});
  };
  watch();
  const picked = (ev) => {
    const t = ev.target;
    if (t && t.closest && t.closest("[data-testid='stFileUploader']")) g.pickedAt = Date.now();
  };
  doc.addEventListener("change", picked, true);
  doc.addEventListener("drop", picked, true);
  w.addEventListener("click", (ev) => {
    if (g.replaying || !busy()) return;
    const link = ev.target && ev.target.closest && ev.target.closest("a[data-testid='stPageLink-NavLink']");
    if (!link) return;
    ev.preventDefault(); ev.stopImmediatePropagation();
    g.held = link; doc.body.style.cursor = "progress";
    clearTimeout(g.timer); g.timer = setTimeout(release, 100);
  }, true);
})();
