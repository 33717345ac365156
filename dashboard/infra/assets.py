"""The browser libraries the dashboard serves itself, once, instead of inlining them in every page.

A graph drawing is a small HTML page shown in an iframe. Inlined, vis-network makes each one
~700 kB, sent over the websocket and parsed again at every redraw (two or three per λ step on
the live Learn page). With ``server.enableStaticServing`` (``.streamlit/config.toml``) Streamlit
serves the app's ``static/`` folder under ``app/static/``; :func:`vis_assets_url` copies
vis-network there from the installed pyvis package (the very files
:func:`colide_core.render.graph_html.graph_html` would inline, so nothing is downloaded and nothing can
diverge) and returns the URL path the drawings then load it from, which the browser caches.

When the folder cannot be written, or static serving is off, it returns None and the drawings
inline the library as before: slower, never broken.
"""
from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import threading
from pathlib import Path

from colide_core.render.graph_html import vis_assets
from colide_core.run.app import app_script

__all__ = ["STATIC_DIR", "VIS_SUBDIR", "install_file", "vis_assets_url"]

#: Streamlit's app static folder: ``static/`` next to ``app.py`` (served as ``app/static/``): the
#: checkout's root, or the installed ``colide_app/`` (:func:`colide_core.run.app.app_script`).
STATIC_DIR = app_script().parent / "static"
#: Sub-folder of the vis-network copy; named after its version so a new pyvis never meets a
#: stale cached copy in a browser.
VIS_SUBDIR = "vis-network-9.1.2"

_LOCK = threading.Lock()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def install_file(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` unless an identical file is there (atomic replace).

    Parameters
    ----------
    source, target : pathlib.Path

    Raises
    ------
    OSError
        If the target's folder cannot be made or written.
    """
    if target.is_file() and target.stat().st_size == source.stat().st_size and _digest(target) == _digest(source):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(source.read_bytes())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@functools.lru_cache(maxsize=1)
def _installed(static_dir: Path) -> bool:
    try:
        with _LOCK:
            for name, source in vis_assets().items():
                install_file(source, static_dir / VIS_SUBDIR / name)
        return True
    except OSError:
        return False


def vis_assets_url(static_serving: bool | None = None) -> str | None:
    """URL path (relative to the app's pages) of the served vis-network, or None to inline it.

    Parameters
    ----------
    static_serving : bool, optional
        Whether Streamlit serves ``static/``; default: the ``server.enableStaticServing`` option.

    Returns
    -------
    str or None
        ``"app/static/vis-network-9.1.2"`` once the files are in place (copied on the first
        call of the process, checked by SHA-256), None when static serving is off or the copy
        failed (a read-only install).

    Notes
    -----
    The drawings are ``srcdoc`` iframes, whose relative URLs resolve against the page's own
    URL, so the path also works under a ``server.baseUrlPath``.
    """
    if static_serving is None:
        import streamlit as st

        static_serving = bool(st.get_option("server.enableStaticServing"))
    if not static_serving:
        return None
    if not all((STATIC_DIR / VIS_SUBDIR / name).is_file() for name in vis_assets()):
        _installed.cache_clear()  # removed while the server runs: copy again
    if not _installed(STATIC_DIR):
        return None
    return f"app/static/{VIS_SUBDIR}"
