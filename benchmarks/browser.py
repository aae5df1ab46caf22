"""Headless Chromium (the system's, driven by Playwright) that may reach loopback only.

Chromium's own background traffic (updates, sync, safe browsing) is turned off by its flags;
every request the page makes goes through ``route``, which lets loopback through and aborts
and records anything else, so a test can assert that the page needs nothing from the network.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",  # root in a container has no user namespace for Chromium's sandbox
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
]
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def chromium_path() -> str:
    """The system's Chromium: ``CRAG_CHROMIUM``, else ``chromium`` on the PATH."""
    path = os.environ.get("CRAG_CHROMIUM") or shutil.which("chromium")
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError(
            "No Chromium found: install the system's package (make browser, or "
            "apt-get install chromium) or set CRAG_CHROMIUM to its executable."
        )
    return path


@dataclass
class OfflinePage:
    """A page whose requests outside loopback are aborted and listed in ``outside``."""

    page: Any
    outside: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Uncaught exceptions and console errors of the page."""


@contextmanager
def offline_page(width: int = 1400, height: int = 900) -> Iterator[OfflinePage]:
    """A fresh headless Chromium page (own profile), closed when the block ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            context.set_default_timeout(30_000)
            view = OfflinePage(context.new_page())

            def route(r: Any) -> None:
                url = r.request.url
                if urlsplit(url).scheme in {"data", "blob"} or urlsplit(url).hostname in LOOPBACK:
                    r.continue_()
                else:
                    view.outside.append(url)
                    r.abort()

            context.route("**/*", route)
            view.page.on("pageerror", lambda exc: view.errors.append(str(exc)))
            view.page.on(
                "console", lambda m: view.errors.append(m.text) if m.type == "error" else None
            )
            yield view
        finally:
            browser.close()
