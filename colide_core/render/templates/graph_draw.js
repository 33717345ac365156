/* The one drawing code of colide_core.render.graph_html: every graph page (graph_page.html.j2,
 * playback.html.j2, the report) and the dashboard's long-lived drawing (dashboard/graphview.py,
 * which redraws one document in place at each rerun instead of building a new page).
 *
 * colideDraw(drawing) draws `drawing` (graph_html.graph_drawing: the vis-network node and edge lists,
 * options and the fit's numbers) in #mynetwork: the first call builds the network, a later call
 * replaces its nodes and edges in place (no new document, no new vis-network). Then it sizes the
 * canvas (fill mode), widens the drawing to the frame's shape, fits it, enlarges the labels towards
 * the target size on screen (never beyond the no-overlap font), fits again and keeps every
 * arrowhead off every label (tidyEdges).
 *
 * Globals read by the player (playback.html.j2) and the browser tests: nodes, edges, network,
 * plainTitles, tidyEdges, drawingGeometry (the arrowheads and orientable dots, the lines' ends and
 * points, the "?" marks', labels' and nodes' boxes as drawn), colideDrawn (how many drawings were
 * made in this document); colideLegend builds a legend sent as data (the dashboard's drawing) with
 * textContent.
 *
 * Tooltips are plain text: each string title becomes an element whose textContent is the title
 * (vis-network shows an element as it is), so no title is ever read as HTML. This file is pure
 * JavaScript: it holds no user text (graph_html inlines it, marked safe, where a page is written).
 */
var nodes, edges, network, colideDrawn = 0;
function plainTitles(items) {
  return items.map(function (item) {
    if (typeof item.title !== 'string') return item;
    var tip = document.createElement('div');
    tip.style.whiteSpace = 'pre';
    tip.textContent = item.title;
    return Object.assign({}, item, {title: tip});
  });
}
// The legend as data (graph_html.graph_drawing's "legend": [{text, colour?, dashed?, marker?, halo?}]) built
// into `slot` with DOM calls: every text through textContent, a colour only when it is a hex colour,
// so nothing the drawing receives is ever read as HTML. Replaces what the slot held.
function colideLegend(slot, entries) {
  while (slot.firstChild) slot.removeChild(slot.firstChild);
  if (!Array.isArray(entries) || !entries.length) return;
  var box = document.createElement('div');
  box.id = 'legend';
  box.style.cssText = 'clear:both;font:13px sans-serif;padding:6px 2px';
  entries.forEach(function (entry) {
    if (!entry || typeof entry !== 'object') return;
    var item = document.createElement('span');
    item.style.cssText = 'display:inline-block;margin-right:14px;white-space:nowrap';
    var colour = typeof entry.colour === 'string' && /^#[0-9a-fA-F]{3,8}$/.test(entry.colour) ? entry.colour : null;
    if (colour) {
      var line = document.createElement('span');
      line.style.cssText = 'display:inline-block;width:28px;vertical-align:middle;margin-right:5px';
      line.style.borderTop = '3px ' + (entry.dashed === true ? 'dashed' : 'solid') + ' ' + colour;
      item.appendChild(line);
    } else if (typeof entry.halo === 'string' && /^#[0-9a-fA-F]{3,8}$/.test(entry.halo)) {
      var halo = document.createElement('span');  // a grey line with the halo's glow (settled edges)
      halo.style.cssText = 'display:inline-block;width:28px;vertical-align:middle;margin-right:8px;' +
        'border-top:3px solid #7f7f7f';
      halo.style.boxShadow = '0 0 5px 3px ' + entry.halo;
      item.appendChild(halo);
    } else if (typeof entry.marker === 'string') {
      var mark = document.createElement('span');
      mark.style.cssText = 'display:inline-block;width:28px;text-align:center;margin-right:5px';
      mark.textContent = entry.marker;
      item.appendChild(mark);
    }
    item.appendChild(document.createTextNode(String(entry.text == null ? '' : entry.text)));
    box.appendChild(item);
  });
  slot.appendChild(box);
}
var colideDraw = (function () {
  var BASE, MAXF, TARGET, FILL, RING, BENDS, shown, SCALES = [1, 0.75, 0.55, 0.4], STRETCH = 3;
  // vis-network 9.1.2's arrowheads in units of their length, tip at (0, 0), pointing along +x
  var SHAPES = {arrow: [[0, 0], [-1, 0.3], [-0.9, 0], [-1, -0.3]], bar: [[0, 0.5], [0, -0.5], [-0.15, -0.5], [-0.15, 0.5]],
                circle: [[0, 0.4], [-0.8, 0.4], [-0.8, -0.4], [0, -0.4]]};
  var home = {};
  // An edge's mark that must read like a node label (the "?" of an edge whose reverse the data
  // prefer, graph_style.DISPUTED_STYLE) carries markFont: its label is that many times the labels' size.
  function markFonts(items, size) {
    return items.map(function (e) {
      return typeof e.markFont === 'number' ? Object.assign({}, e, {font: Object.assign({}, e.font, {size: size * e.markFont})}) : e;
    });
  }
  function ctx() { return network.canvas.frame.canvas.getContext('2d'); }
  // Use the frame: a drawing wider than it is tall (a circle in a wide frame used 40 % of its
  // width) is widened to the frame's shape, at most STRETCH times, never narrowed. A ring (the
  // circular layout) becomes an ellipse with its nodes at equal distances along it, in the same
  // order, so that the nodes at its ends are no closer together than those at its top.
  function stretch() {
    var ids = nodes.getIds();
    if (ids.length < 3) return;
    var xs = ids.map(function (i) { return home[i][0]; }), ys = ids.map(function (i) { return home[i][1]; });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs), ex = x1 - x0;
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys), ey = y1 - y0;
    var c = document.getElementById('mynetwork'), cw = c.clientWidth, ch = c.clientHeight;
    if (!(ex > 0 && ey > 0 && cw > 0 && ch > 0)) return;
    var k = Math.max(1, Math.min(STRETCH, 0.9 * (cw / ch) / (ex / ey))), cx = 0.5 * (x0 + x1), cy = 0.5 * (y0 + y1);
    if (!RING || k < 1.05) {
      nodes.update(ids.map(function (i) { return {id: i, x: cx + k * (home[i][0] - cx), y: home[i][1]}; }));
      return;
    }
    var a = 0.5 * k * ex, b = 0.5 * ey, M = 720, arc = [0];  // arc length along the ellipse from the top, clockwise
    for (var m = 1; m <= M; m++) {
      var t0 = 2 * Math.PI * (m - 1) / M, t1 = 2 * Math.PI * m / M;
      arc.push(arc[m - 1] + Math.hypot(a * (Math.sin(t1) - Math.sin(t0)), b * (Math.cos(t1) - Math.cos(t0))));
    }
    nodes.update(ids.map(function (i) {
      var f = ((Math.atan2(home[i][0] - cx, -(home[i][1] - cy)) / (2 * Math.PI)) + 1) % 1, want = f * arc[M], m = 0;
      while (m < M && arc[m + 1] < want) m++;
      var t = 2 * Math.PI * (m + (want - arc[m]) / Math.max(arc[m + 1] - arc[m], 1e-9)) / M;
      return {id: i, x: cx + a * Math.sin(t), y: cy - b * Math.cos(t)};
    }));
  }
  function boxes() {
    return nodes.getIds().map(function (i) {
      var s = network.body.nodes[i].labelModule.size;
      return {id: i, left: s.left, top: s.top, right: s.left + s.width, bottom: s.top + s.height};
    });
  }
  // an edge's arrowhead at its target as drawn (or, with end 'from', the mark at its start: the
  // orientable dot; null when it has none): vis-network's own geometry (getArrowData)
  function head(e, end) {
    end = end || 'to';
    var v = e.getFormattingValues();
    if (end === 'from' && !v.fromArrow) return null;
    // as Edge.draw does first: the line's ends are the nodes (a drawn edge keeps its arrow's base there)
    e.edgeType.fromPoint = e.edgeType.from; e.edgeType.toPoint = e.edgeType.to;
    var a = e.edgeType.getArrowData(ctx(), end, e.edgeType.getViaNode(), false, false, v);
    var c = Math.cos(a.angle), s = Math.sin(a.angle), shape = SHAPES[a.type] || SHAPES.arrow;
    return {type: a.type, tip: a.point, length: a.length, angle: a.angle, strike: v.arrowStrikethrough !== false,
            polygon: shape.map(function (p) { return [a.point.x + a.length * (p[0] * c - p[1] * s),
                                                      a.point.y + a.length * (p[0] * s + p[1] * c)]; })};
  }
  // The "?" of an edge whose reverse the data prefer (markFont) must not read as part of an
  // arrowhead (issue 48: on a short edge, Plcg -> PIP2 on nine-condition Sachs, the middle of the
  // line is where the arrowhead starts). It sits at the middle of its line when its box is at
  // least MARK_GAP screen pixels from the edge's arrowhead and dot; else beside the line, the box
  // MARK_GAP pixels off it, at the first place from the middle outwards (either side) that keeps
  // that distance from every arrowhead and dot of the edge and from every node. Computed at each
  // draw, from the geometry as drawn (a dragged node moves it with the line).
  var MARK_GAP = 4;
  function markPoint(e, w, h) {
    var et = e.edgeType, keep = [et.fromPoint, et.toPoint], via = et.getViaNode(), k = network.getScale();
    var marks = [head(e, 'to'), head(e, 'from')].filter(Boolean), gap = MARK_GAP / k;
    var avoid = marks.map(function (a) { return a.polygon; }), reach = Math.max.apply(null, marks.map(function (a) { return a.length; }));
    et.fromPoint = et.from; et.toPoint = et.to;
    var bb = nodes.getIds().map(function (id) { return network.getBoundingBox(id); }).filter(Boolean);
    function clear(x, y) {
      var b = {left: x - w / 2, right: x + w / 2, top: y - h / 2, bottom: y + h / 2};
      if (avoid.some(function (P) { return meets(P, b, -gap); })) return false;
      return !bb.some(function (n) { return b.left - gap < n.right && b.right + gap > n.left && b.top - gap < n.bottom && b.bottom + gap > n.top; });
    }
    function at(t) {
      var p = et.getPoint(t, via), q = et.getPoint(Math.min(1, t + 0.01), via), r = et.getPoint(Math.max(0, t - 0.01), via);
      var dx = q.x - r.x, dy = q.y - r.y, n = Math.hypot(dx, dy) || 1;
      return {x: p.x, y: p.y, nx: -dy / n, ny: dx / n};
    }
    var mid = at(0.5), found = null, line = 0.5 * (e.options.width || 1);
    if (clear(mid.x, mid.y)) found = {x: mid.x, y: mid.y};
    for (var i = 0; !found && i <= 8; i++) {
      var ts = i === 0 ? [0.5] : [0.5 - 0.05 * i, 0.5 + 0.05 * i];
      for (var j = 0; !found && j < ts.length; j++) {
        var p = at(ts[j]), off = 0.5 * (Math.abs(p.nx) * w + Math.abs(p.ny) * h) + line + gap;
        for (var more = 0; more <= 1.001 && !found; more += 0.25) {  // further off, up to an arrowhead's length
          for (var side = 1; side >= -1 && !found; side -= 2) {
            var x = p.x + side * (off + more * reach) * p.nx, y = p.y + side * (off + more * reach) * p.ny;
            if (clear(x, y)) found = {x: x, y: y};
          }
        }
      }
    }
    if (!found) {  // nowhere clear of everything: beside the middle, clear of the line at least
      var o = 0.5 * (Math.abs(mid.nx) * w + Math.abs(mid.ny) * h) + line + gap;
      found = {x: mid.x + o * mid.nx, y: mid.y + o * mid.ny};
    }
    et.fromPoint = keep[0]; et.toPoint = keep[1];
    return found;
  }
  // vis-network draws an edge's label at its middle (Edge.drawLabel); a marked edge's label is
  // drawn at markPoint instead, upright, as vis-network draws any label
  function placeMarks() {
    edges.getIds({filter: function (e) { return typeof e.markFont === 'number'; }}).forEach(function (id) {
      var E = network.body.edges[id];
      if (!E || E.colideMark) return;
      E.colideMark = true;
      var own = E.drawLabel;
      E.drawLabel = function (c, via) {
        if (this.options.label === undefined || this.from === this.to) return own.call(this, c, via);
        var lm = this.labelModule;
        if (lm.differentState(this.selected, this.hover) || !lm.size.width) lm.getTextSize(c, this.selected, this.hover);
        lm.pointToSelf = false;
        var p = markPoint(this, lm.size.width, lm.size.height);
        lm.draw(c, p.x, p.y, this.selected, this.hover);
      };
    });
  }
  // does the convex polygon P meet the box b shrunk by pad? (separating axes)
  function meets(P, b, pad) {
    var R = [[b.left + pad, b.top + pad], [b.right - pad, b.top + pad], [b.right - pad, b.bottom - pad], [b.left + pad, b.bottom - pad]];
    if (R[1][0] <= R[0][0] || R[2][1] <= R[1][1]) return false;
    var polys = [P, R];
    for (var q = 0; q < 2; q++) {
      var Q = polys[q];
      for (var i = 0; i < Q.length; i++) {
        var j = (i + 1) % Q.length, nx = Q[i][1] - Q[j][1], ny = Q[j][0] - Q[i][0];
        if (nx === 0 && ny === 0) continue;
        var pa = P.map(function (p) { return p[0] * nx + p[1] * ny; }), ra = R.map(function (p) { return p[0] * nx + p[1] * ny; });
        if (Math.max.apply(null, pa) <= Math.min.apply(null, ra) || Math.max.apply(null, ra) <= Math.min.apply(null, pa)) return false;
      }
    }
    return true;
  }
  // cost of an edge as drawn now: labels its arrowhead covers (heavily), labels of other nodes its line crosses
  function cost(e, bx, pad) {
    var P = head(e).polygon, n = 0;
    bx.forEach(function (b) { if (meets(P, b, pad)) n += 100; });
    var via = e.edgeType.getViaNode();
    for (var t = 0.05; t < 0.96; t += 0.05) {
      var p = e.edgeType.getPoint(t, via);
      bx.forEach(function (b) {
        if (b.id !== e.fromId && b.id !== e.toId && p.x > b.left && p.x < b.right && p.y > b.top && p.y < b.bottom) n += 1;
      });
    }
    return n;
  }
  // Keep arrowheads off labels, and lines off other nodes' labels: an edge whose arrowhead covers a
  // label (a short edge between neighbours, or one that arrives along a row of labels) or whose line
  // crosses one gets a smaller arrowhead, then another bend: the first that covers and crosses
  // nothing, else the one that covers fewest labels, then crosses fewest.
  function tidyEdges() {
    network.redraw();
    var bx = boxes(), pad = 0.5 / network.getScale(), changes = [];
    edges.getIds().forEach(function (id) {
      var e = network.body.edges[id], opts = edges.get(id), best = null, start = cost(e, bx, pad);
      if (start === 0) return;
      var smooth0 = opts.smooth || {type: 'curvedCW', roundness: 0.12}, scale0 = opts.arrows.to.scaleFactor || 1,
          width0 = opts.width, tries = [];
      [[smooth0.type, smooth0.roundness]].concat(BENDS).forEach(function (bend) {
        SCALES.forEach(function (k) { tries.push({smooth: {type: bend[0], roundness: bend[1]}, scale: scale0 * k, width: width0}); });
      });
      // last: a thinner line, whose arrowhead is smaller (vis-network's is 15 x scale + 3 x width long);
      // the tooltip still gives the weight
      [[smooth0.type, smooth0.roundness]].concat(BENDS).forEach(function (bend) {
        [0.5 * width0, 1].forEach(function (w) { tries.push({smooth: {type: bend[0], roundness: bend[1]}, scale: scale0 * 0.4, width: w}); });
      });
      function apply(t) {
        e.setOptions({smooth: t.smooth, width: t.width, arrows: {to: {enabled: true, type: opts.arrows.to.type, scaleFactor: t.scale}}});
      }
      for (var i = 0; i < tries.length; i++) {
        apply(tries[i]);
        var c = cost(e, bx, pad);
        if (!best || c < best.cost) best = Object.assign({cost: c}, tries[i]);
        if (c === 0) break;
      }
      apply({smooth: smooth0, scale: scale0, width: width0});
      if (best && best.cost < start) {
        changes.push({id: id, smooth: best.smooth, width: best.width, arrows: Object.assign({}, opts.arrows,
                      {to: Object.assign({}, opts.arrows.to, {scaleFactor: best.scale})})});
      }
    });
    if (changes.length) edges.update(changes);
    network.redraw();
  }
  function layout() {
    var c = document.getElementById('mynetwork');
    if (FILL) {
      var other = ['legend', 'player', 'caption'].reduce(function (acc, id) {
        var e = document.getElementById(id); return acc + (e ? e.offsetHeight : 0); }, 0);
      var h = Math.max(120, window.innerHeight - other - 2);
      c.style.height = h + 'px';
      network.setSize('100%', h + 'px');
    }
    stretch();
    network.fit({animation: false});
    var f = Math.min(MAXF, Math.max(BASE, TARGET / network.getScale()));
    if (Math.abs(f - shown) > 0.25) {
      shown = f;
      nodes.update(nodes.getIds().map(function (id) {  // only the size: the label's colour stays
        return {id: id, font: Object.assign({}, nodes.get(id).font, {size: f})};
      }));
      var marked = markFonts(edges.get({filter: function (e) { return typeof e.markFont === 'number'; }}), f);
      if (marked.length) edges.update(marked);
      network.fit({animation: false});
    }
    placeMarks();
    tidyEdges();
  }
  // what is drawn, in drawing units: each edge's arrowhead at its target (polygon, tip, type,
  // whether the line runs through it to the node) and where its line ends, and each label's box
  window.drawingGeometry = function () {
    network.redraw();
    return {scale: network.getScale(), labels: boxes(),
            arrows: edges.getIds().map(function (id) {
              var e = network.body.edges[id], h = head(e), dot = head(e, 'from');
              var end = h.strike ? network.getPositions([e.toId])[e.toId] : {x: h.tip.x - 0.9 * h.length * Math.cos(h.angle),
                                                                           y: h.tip.y - 0.9 * h.length * Math.sin(h.angle)};
              var s = e.labelModule.size, marked = e.colideMark === true;
              var curve = [];
              for (var t = 0; t <= 1.0001; t += 0.02) curve.push(e.edgeType.getPoint(t, e.edgeType.getViaNode()));
              return Object.assign({id: id, from: e.fromId, to: e.toId, lineEnd: end, start: dot && dot.polygon, curve: curve,
                                    mark: marked ? {left: s.left, top: s.top, right: s.left + s.width, bottom: s.top + s.height} : null}, h);
            }),
            nodes: nodes.getIds().map(function (id) { return Object.assign({id: id}, network.getBoundingBox(id)); })};
  };
  window.tidyEdges = function () { tidyEdges(); };
  return function (drawing) {
    BASE = drawing.base_font; MAXF = drawing.max_font; TARGET = drawing.target_font; FILL = drawing.fill;
    RING = drawing.ring; BENDS = drawing.bends;
    home = {};
    drawing.nodes.forEach(function (n) { home[n.id] = [n.x, n.y]; });
    if (!network) {
      shown = BASE;
      nodes = new vis.DataSet(plainTitles(drawing.nodes));
      edges = new vis.DataSet(markFonts(plainTitles(drawing.edges), BASE));
      network = new vis.Network(document.getElementById('mynetwork'), {nodes: nodes, edges: edges}, drawing.options);
      window.addEventListener('resize', layout);
    } else {
      // In place: the same nodes at the same places keep the font they are shown with (no second
      // fit); the edges are replaced. One redraw follows (vis-network redraws on the next frame).
      var same = nodes.length === drawing.nodes.length && drawing.nodes.every(function (n) { return nodes.get(n.id) !== null; });
      var fresh = plainTitles(drawing.nodes);
      if (same) {
        fresh = fresh.map(function (n) { return Object.assign({}, n, {font: Object.assign({}, n.font, {size: shown})}); });
      } else {
        shown = BASE;
        nodes.clear();
      }
      edges.clear();
      nodes.update(fresh);
      edges.add(markFonts(plainTitles(drawing.edges), shown));
    }
    layout();
    colideDrawn += 1;
  };
})();
