(() => {
  const w = window.parent && window.parent.document ? window.parent : window;
  if (w.__colideUploadGuard) return;
  const doc = w.document, graceMs = 400, maxHoldMs = 120000, startMs = 3000;
  const g = w.__colideUploadGuard = {inFlight: 0, pickedAt: 0, lastDoneAt: 0, held: null, timer: null};
  const busy = () => {
    const now = Date.now();
    if (g.inFlight > 0) return now - g.pickedAt < maxHoldMs;
    if (g.pickedAt && g.lastDoneAt < g.pickedAt) return now - g.pickedAt < startMs;  // not started yet
    return now - g.lastDoneAt < graceMs;
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
      this.addEventListener("loadend", () => { g.inFlight -= 1; g.lastDoneAt = Date.now(); }, {once: true});
    }
    return send.apply(this, arguments);
  };
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
