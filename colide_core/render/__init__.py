"""Rendering: every figure (:mod:`.plots`, plotly), drawing (:mod:`.graph_html`, pyvis;
:mod:`.graph_style`, positions and sizes), picture (PNG/SVG, matplotlib) and HTML page
(:mod:`.report`). The only subpackage that imports a drawing library (``tests/test_layout.py``).
"""
