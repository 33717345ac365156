"""Rendering: every figure (:mod:`.plots`, plotly), drawing (:mod:`.graph_html`, pyvis;
:mod:`.graph_style`, positions and sizes), picture (PNG/SVG, matplotlib) and HTML page
(:mod:`.report`). The only subpackage that imports a drawing library (``tests/test_layout.py``).
"""

from colide_core import _lazy_submodules

__getattr__ = _lazy_submodules(__name__)  # ``colide_core.<sub>.<module>`` imports on first use
