/* Streamlit's component protocol (version 1) for the long-lived drawing (dashboard/graphview.py).
 *
 * The page sends {drawing, token, label, height} at every rerun (a "streamlit:render" message from
 * the parent frame). A new token means a new drawing: colideDraw (graph_draw.js) redraws it in
 * place. The same token (an unchanged graph at a new λ) leaves the canvas as it is. The label, the
 * heading the page gives this drawing, is kept on the document (window.colideLabel and the body's
 * data-label) once the drawing it heads is drawn: the browser tests and benchmarks/bench_app.py
 * wait on it.
 *
 * Only messages from the parent frame and from this document's own origin are read (the dashboard
 * serves both; a page of another origin that frames this one is ignored). Nothing received is read
 * as HTML: the legend comes as data and colideLegend (graph_draw.js) builds it with textContent,
 * node names are canvas text and tooltips textContent. Replies go to this origin only.
 */
(function () {
  // The document runs only framed by a page of its own origin (Streamlit's, which frames its
  // components same-origin): what a frame-ancestors 'self' header would say, where Streamlit sends
  // none. A page of another origin that frames it gets no reply and drives nothing.
  var framedBySelf = false;
  try {
    framedBySelf = window.parent !== window && window.parent.location.origin === window.location.origin;
  } catch (e) {
    framedBySelf = false;  // reading another origin's location throws
  }
  if (!framedBySelf) return;
  var token = null, height = null, pending = null, timer = null, received = 0;
  window.colideLabel = null;
  function send(type, data) {
    window.parent.postMessage(Object.assign({isStreamlitMessage: true, type: type}, data || {}), window.location.origin);
  }
  // Draw the last drawing received once the frame has the height asked for: a first drawing made
  // in a frame still being resized would be fitted twice. A frame that never reaches it exactly
  // (zoom, rounding) is drawn anyway after half a second.
  function draw() {
    if (!pending) return;
    if (Math.abs(window.innerHeight - height) > 1 && timer !== null) return;
    clearTimeout(timer); timer = null;
    var args = pending, start = performance.now();
    pending = null;
    if (args.token !== token) {
      colideLegend(document.getElementById('legend-slot'), args.drawing.legend);
      colideDraw(args.drawing);
      token = args.token;
    }
    // when the last drawing arrived and was drawn, on the wall clock (comparable across frames):
    // benchmarks/bench_app.py splits a λ step into the server's part and the drawing's
    window.colideTiming = {received: performance.timeOrigin + received, drawn: performance.timeOrigin + performance.now(),
                           draw_ms: performance.now() - start};
    window.colideLabel = args.label;
    document.body.setAttribute('data-label', args.label || '');
  }
  window.addEventListener('resize', draw);
  window.addEventListener('message', function (event) {
    if (event.source !== window.parent || event.origin !== window.location.origin) return;
    var msg = event.data;
    if (!msg || msg.type !== 'streamlit:render' || !msg.args || !msg.args.drawing) return;
    pending = msg.args;
    received = performance.now();
    if (pending.height !== height) {
      height = pending.height;
      send('streamlit:setFrameHeight', {height: height});
    }
    if (Math.abs(window.innerHeight - height) > 1) {
      clearTimeout(timer);
      timer = setTimeout(function () { timer = null; draw(); }, 500);
      return;
    }
    draw();
  });
  send('streamlit:componentReady', {apiVersion: 1});
})();
