"""The real browser the page tests drive: Debian's Chromium (``apt-get install chromium``), found on
``PATH`` or named by ``$CHROMIUM``, through Playwright (which never downloads a browser here).

Shared by ``test_viewer.py`` and ``test_server.py``; a test needing the browser carries
``needs_chromium`` (and ``needs_playwright``), which skip it with one line saying what to install."""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium() -> str | None:
    """The system Chromium binary (``$CHROMIUM`` overrides), or None."""
    env = os.environ.get("CHROMIUM")
    if env:
        return shutil.which(env) or (env if os.path.exists(env) else None)
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def sync_playwright() -> Any:
    """Playwright's ``sync_playwright``, or None when Playwright is not installed."""
    try:
        from playwright.sync_api import sync_playwright as found
    except ImportError:
        return None
    return found


CHROMIUM = find_chromium()
#: how to get the browser, in the skip reason that ``pytest -rs`` shows
INSTALL_CHROMIUM = ("on Debian or Ubuntu `sudo apt-get install chromium`, or set CHROMIUM=/path/to/chromium "
                    "(any Chromium or Chrome binary)")
if os.environ.get("CHROMIUM"):
    NO_CHROMIUM = f"needs Chromium; CHROMIUM={os.environ['CHROMIUM']} names no program ({INSTALL_CHROMIUM})"
else:
    NO_CHROMIUM = f"needs Chromium, which is not installed: {INSTALL_CHROMIUM}"
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
needs_playwright = pytest.mark.skipif(sync_playwright() is None, reason="playwright is not installed (pip install "
                                      "playwright; it drives the system Chromium, no browser download)")
