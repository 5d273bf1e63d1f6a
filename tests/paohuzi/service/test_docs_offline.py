"""``/docs`` and ``/redoc`` of ``paohuzi serve`` draw with no Internet (issue 60: ``/docs`` was a
blank page offline, FastAPI's default pages loading Swagger UI from a CDN): Debian's chromium
(Playwright, never ``playwright install``) loads each page from a real server on loopback
with every request to any other host aborted, and finds the operations listed; the page
asked for nothing elsewhere (ReDoc but its footer's logo)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from dash_helpers import CHROMIUM, CHROMIUM_ARGS

from paohuzi.service.process import Server

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="needs Debian's chromium (make browser-deps)"
)
LOCAL = {"127.0.0.1", "localhost", "::1"}


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[Server]:
    with Server(store) as s:
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _offline_page(browser: Any) -> tuple[Any, list[str]]:
    """A page whose every request off this machine is aborted (and listed)."""
    page = browser.new_page()
    elsewhere: list[str] = []

    def route(r: Any) -> None:
        if urlsplit(r.request.url).hostname in LOCAL:
            r.continue_()
        else:
            elsewhere.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return page, elsewhere


def _operations(server: Server) -> set[str]:
    status, schema = server.json("GET", "/openapi.json")
    assert status == 200
    return {f"{m.upper()} {p}" for p, ops in schema["paths"].items() for m in ops}


def test_swagger_ui_lists_the_operations_offline(server: Server, browser: Any) -> None:
    page, elsewhere = _offline_page(browser)
    page.goto(f"http://127.0.0.1:{server.port}/docs", wait_until="load", timeout=60_000)
    page.wait_for_selector(".opblock-summary", timeout=30_000)
    shown = {
        " ".join(t.split())
        for t in page.eval_on_selector_all(
            ".opblock-summary",
            "els => els.map(e => e.querySelector('.opblock-summary-method').textContent"
            " + ' ' + e.querySelector('.opblock-summary-path').textContent)",
        )
    }
    shown = {s.replace("\u200b", "") for s in shown}  # Swagger UI breaks long paths with ZWSP
    assert shown == _operations(server), shown
    assert page.title() == "paohuzi - Swagger UI"
    assert elsewhere == [], elsewhere
    page.close()


def test_redoc_lists_the_operations_offline(server: Server, browser: Any) -> None:
    page, elsewhere = _offline_page(browser)
    page.goto(f"http://127.0.0.1:{server.port}/redoc", wait_until="load", timeout=60_000)
    page.wait_for_selector("[data-section-id^='operation/']", timeout=30_000)
    n = page.locator("[data-section-id^='operation/']").count()
    assert n == len(_operations(server)), n
    # ReDoc's "API docs by Redocly" footer shows its logo from its makers' site (no option
    # hides it): an image, the page drawn without it
    assert set(elsewhere) <= {"https://cdn.redoc.ly/redoc/logo-mini.svg"}, elsewhere
    page.close()
