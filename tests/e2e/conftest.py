"""Fixtures of the browser tests: one Streamlit server and one headless chromium for the session."""
import pytest
from playwright.sync_api import sync_playwright

from tests.e2e.harness import StreamlitServer, launch_chromium


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
