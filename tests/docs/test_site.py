"""The documentation site (mkdocs.yml, ``make docs``) builds with every warning an error, and
every page of its navigation comes out as an HTML page with content: the README as the home
page, the CLI reference generated from the commands' own help, the Python API reference from
the docstrings."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def nav_pages(nav: list) -> Iterator[str]:
    """The Markdown files a ``nav`` lists, in order, at any depth."""
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            yield from nav_pages(value)
        else:
            yield value


def page_text(site: Path, page: str) -> str:
    """The text of the article a nav page became (``X.md`` → ``X/index.html``)."""
    stem = page.removesuffix(".md")
    out = site / ("index.html" if stem == "index" else f"{stem}/index.html")
    assert out.is_file(), f"{page} produced no {out.relative_to(site)}"
    doc = out.read_text(encoding="utf-8")
    article = doc[doc.index("<article") : doc.index("</article>")]
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", article)))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    return out


def test_every_nav_page_is_built_with_content(site: Path) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = list(nav_pages(config["nav"]))
    assert {"index.md", "RULES.md", "CLI.md", "API_REFERENCE.md"} <= set(pages)
    for page in pages:
        text = page_text(site, page)
        assert len(text) > 300, f"{page}: {len(text)} characters of text"


def test_the_home_page_is_the_readme(site: Path) -> None:
    text = page_text(site, "index.md")
    assert "The main job" in text and "paohuzi simulate" in text
    # the README's links into docs/ are the site's pages
    home = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="COMMANDS/"' in home and 'src="screenshots/first_view.png"' in home


def test_the_cli_reference_is_the_commands_help(site: Path) -> None:
    text = page_text(site, "CLI.md")
    for words in ("paohuzi simulate", "--hands", "--policies", "--duplicate", "--backend"):
        assert words in text, words
    # a command's examples (click's \b paragraph) stay one to a line
    doc = (site / "CLI" / "index.html").read_text(encoding="utf-8")
    assert "paohuzi dashboard\npaohuzi dashboard --data /big/store --port 8600\n" in doc


def test_the_api_reference_is_the_docstrings(site: Path) -> None:
    text = page_text(site, "API_REFERENCE.md")
    for words in ("engine.state.State", "legal_actions", "engine.rules.RuleSet", "load_hand"):
        assert words in text, words
    assert ":meth:" not in text


def test_every_nav_page_renders_in_the_browser(site: Path) -> None:
    """Each page of the navigation, served over HTTP and opened in Chromium with every other
    host blocked, draws its article (the theme's script and styles come with the site) and
    logs no error."""
    import functools
    import http.server
    import threading

    from dash_helpers import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = list(nav_pages(config["nav"]))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1024, "height": 800})
            page.route(
                "**/*",
                lambda route: (
                    route.continue_() if route.request.url.startswith(base) else route.abort()
                ),
            )
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            for md in pages:
                stem = md.removesuffix(".md")
                page.goto(f"{base}/" if stem == "index" else f"{base}/{stem}/")
                article = page.locator("article").first
                article.wait_for(state="visible", timeout=20_000)
                assert len(article.inner_text()) > 300, md
                assert page.locator("h1").first.is_visible(), md
            browser.close()
        assert errors == []
    finally:
        server.shutdown()
