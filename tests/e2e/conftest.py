"""Fixtures of the browser tests: one Streamlit server and one headless chromium for the session.

Every test under tests/e2e is marked ``browser`` here, so ``pytest -m "not browser"`` (``make
test-fast``) leaves them out without each file having to say so.
"""
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.e2e.harness import StreamlitServer, launch_chromium

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    """Mark every collected test in this directory (and below) ``browser``."""
    for item in items:
        if _HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def server():
    """``streamlit run app.py`` on a free 127.0.0.1 port, stopped at the end of the session."""
    with StreamlitServer(log_name="e2e_streamlit.log") as srv:
        yield srv


@pytest.fixture(scope="session")
def browser():
    """Debian's /usr/bin/chromium, headless, through Playwright."""
    with sync_playwright() as p:
        b = launch_chromium(p)
        try:
            yield b
        finally:
            b.close()
