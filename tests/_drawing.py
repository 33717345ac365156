"""Read what a graph drawing draws, in a page or shown by an AppTest, for the tests.

Every drawing is ``colideDraw(drawing)`` (colide_core/render/templates/graph_draw.js): a page
written by :func:`colide_core.render.graph_html.graph_html` embeds the call with the drawing as
JSON (``|tojson``); the dashboard's long-lived drawing (:func:`dashboard.graphview.show_graph`)
receives the same dict as its component's argument.
"""
from __future__ import annotations

import json
import re

_CALL = re.compile(r"colideDraw\((\{.*?\})\);\n</script>", re.DOTALL)


def drawing_in(html: str) -> dict:
    """The drawing a graph page draws (its ``colideDraw`` argument): ``nodes``, ``edges``, ..."""
    found = _CALL.findall(html)
    assert len(found) == 1, f"{len(found)} colideDraw calls in the page"
    return json.loads(found[0])


def nodes_in(html: str) -> list:
    return drawing_in(html)["nodes"]


def edges_in(html: str) -> list:
    return drawing_in(html)["edges"]


def shown_drawings(at) -> list:
    """The drawings an AppTest's page shows, in page order, each as text: the long-lived drawing's
    dict as JSON (its component's argument, non-ASCII as is), or the page of an ``st.iframe``."""
    out = [json.dumps(json.loads(el.proto.json_args)["drawing"], ensure_ascii=False)
           for el in at.get("component_instance") if el.proto.component_name.endswith(".colide_drawing")]
    return out + [f.proto.srcdoc for f in at.get("iframe") if "colideDraw(" in (f.proto.srcdoc or "")]


def drawing_of(doc: str) -> dict:
    """The drawing of one item of :func:`shown_drawings`."""
    return json.loads(doc) if doc.lstrip().startswith("{") else drawing_in(doc)
