"""Escaping helpers for user-supplied strings (file names, column names) shown in the UI.

Escape each user string exactly once, where it meets markup. Two targets need escaping:

* HTML (plotly text, which accepts a subset of HTML and decodes entities; HTML written by hand,
  such as the graph legend): :func:`html_escape`, a thin wrapper over :func:`markupsafe.escape`.
  Not for vis-network labels and tooltips in :mod:`dashboard.graph`: those are plain text
  (canvas, ``innerText``), and an escaped name would be shown as ``gene&lt;B&gt;``.
* Streamlit markdown (``st.markdown``, ``st.caption``, widget labels): :func:`md_escape`
  backslash-escapes the markdown punctuation (so ``*``, ``[x](y)``, ``$x$`` and Streamlit's
  ``:red[...]`` / ``:emoji:`` directives stay literal) and then HTML-escapes ``<``, ``>``
  and ``&`` with markupsafe.
"""
from __future__ import annotations

import re

import markupsafe

from colide_core.export import html_escape  # the one HTML escape (markupsafe)

__all__ = ["html_escape", "md_escape"]

# CommonMark allows a backslash before any ASCII punctuation; these are the characters that
# can start markdown syntax or a Streamlit directive (``:``, ``$``).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:^=])")


def md_escape(text) -> str:
    """Return ``text`` escaped for Streamlit markdown.

    Parameters
    ----------
    text : object
        A user-supplied name.

    Returns
    -------
    str
        The text with markdown punctuation backslash-escaped and HTML special characters
        replaced by entities, so it renders literally.
    """
    return str(markupsafe.escape(_MD_SPECIAL.sub(r"\\\1", str(text))))
