"""A real browser for the dashboard's tests: Debian's chromium driven by Playwright (nothing is downloaded), and a
page that records its console errors, the hosts it talks to and its event-stream requests."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.conftest import need_tool

CHROMIUM = "/usr/bin/chromium"


def chromium_problem() -> str | None:
    if not Path(CHROMIUM).exists():
        return "chromium is not installed (Debian/Ubuntu: apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    return None


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's chromium under Playwright's sync API. While it is open this thread runs Playwright's event loop:
    a test that also calls `asyncio.run` opens it afterwards, with this instead of the `browser` fixture."""
    need_tool(chromium_problem())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


class Watched:
    """A page with every console error and every request's host recorded."""

    def __init__(self, browser: Any, *, offline: bool = False) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 1000})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.hosts: set[str] = set()
        self.streams: list[float] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", self._request)
        if offline:
            self.page.route(
                "**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:")) else r.abort()
            )

    def _request(self, request: Any) -> None:
        url = urlparse(request.url)
        if url.scheme in ("http", "https"):
            self.hosts.add(url.hostname or "")
        if "/events" in url.path:
            self.streams.append(time.monotonic())

    def wait(self, expression: str, timeout_s: float = 120) -> Any:
        self.page.wait_for_function(expression, timeout=timeout_s * 1000)
        return self.page.evaluate(expression)

    def close(self) -> None:
        self.context.close()
