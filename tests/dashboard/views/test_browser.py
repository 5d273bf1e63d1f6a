"""The dashboard in a real browser: ``paohuzi dashboard`` on a generated store, Debian's
chromium driven by Playwright (never ``playwright install``; ``make browser-deps`` installs
chromium and the CJK fonts). Every page is visited, its key elements checked and its charts
seen drawn, no Streamlit error box may appear; a bar of the 胡息 histogram is clicked through
to Drill-down; a replay is stepped forward and back; a drill-down is followed into the
replay. A screenshot of each page goes to tests/artifacts/ (git-ignored)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dash_helpers import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, ERRORS

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="needs Debian's chromium (make browser-deps)"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def dashboard_server(store_dir: Path, log_name: str, *extra: str) -> Iterator[str]:
    """``paohuzi dashboard`` on ``store_dir`` (with the options ``extra``), on a free port,
    until the block ends; its base URL once its health check answers (no page has been asked
    for yet)."""
    port = _free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = open(ARTIFACTS / log_name, "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable, "-c", "from paohuzi.cli import main; main()", "dashboard",
            "--data", str(store_dir), "--port", str(port), "--address", "127.0.0.1", *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("paohuzi dashboard did not start")
            time.sleep(0.3)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="module")
def server(store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``paohuzi dashboard`` on the fixture store, on a free port, its Reference page reading
    a reference file of every preset (reference_helpers); its base URL."""
    from reference_helpers import write_reference

    ref = write_reference(tmp_path_factory.mktemp("browser-reference") / "reference.json")
    with dashboard_server(store_dir, "dashboard-server.log", "--reference", str(ref)) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def page(server: str, browser: Any) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1400, "height": 2400})
    pg.set_default_timeout(30_000)
    yield pg
    pg.close()


_SETTLED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]')
    && !!document.querySelector('h1')"""


def settle(pg: Any, timeout: float = 60, still_for: int = 4, every: float = 0.25) -> None:
    """Wait until the script run is over and the page stays still for a second (``still_for``
    readings ``every`` seconds apart)."""
    start, still = time.monotonic(), 0
    while time.monotonic() - start < timeout:
        still = still + 1 if pg.evaluate(_SETTLED) else 0
        if still >= still_for:
            return
        time.sleep(every)
    raise TimeoutError("the page did not settle")


def visit(pg: Any, url: str, shot: str | None = None, charts: int = 0) -> None:
    """Open ``url``, wait for the page (and its ``charts``, drawn), check it has no error."""
    pg.goto(url)
    settle(pg)
    if charts:
        charts_drawn(pg, charts)
    check(pg, shot)


def check(pg: Any, shot: str | None) -> None:
    errors = pg.locator(ERRORS)
    assert errors.count() == 0, [errors.nth(i).inner_text() for i in range(errors.count())]
    if shot:
        pg.screenshot(path=str(ARTIFACTS / f"{shot}.png"), full_page=True)


def main_text(pg: Any) -> str:
    return str(pg.locator('[data-testid="stMain"]').inner_text())


def slider_value(pg: Any) -> int:
    return int(pg.locator('[data-testid="stSliderThumbValue"]').first.inner_text())


PAGES = [
    ("", "overview", ["跑胡子 — overview", "Runs in the store", "Headline rates", "95 %"], 0),
    ("win-rates", "win_rates", ["By seat", "Dealer vs non-dealer", "By policy", "Convergence"], 4),
    ("huxi", "huxi", ["Distributions", "By source of the winning card", "Which groups"], 3),
    ("huangzhuang", "huangzhuang", ["荒庄 rate", "Survival", "Dealer retention"], 3),
    ("mingtang", "mingtang", ["花样 half", "share of wins"], 1),
    (
        "compare",
        "compare",
        ["Headline numbers", "Distributions over the wins", "名堂 frequencies"],
        1,
    ),
    ("reference", "reference_first", ["Selection: hunan, 1 run (base)", "it differs when"], 0),
    ("actions", "actions_page", ["Per hand", "Declined when offered", "Options per real"], 2),
    ("review", "review_page", ["Review", "No stored review"], 0),
    ("sql", "sql", ["row limit", "time limit", "rows in"], 0),
    ("play", "play_read_only", ["paohuzi dashboard --play"], 0),
]

#: the charts: (Vega-Lite charts on the page, those drawn: an SVG or canvas with marks)
_CHARTS = """() => [document.querySelectorAll('.vega-embed').length,
    [...document.querySelectorAll('.vega-embed')].filter(e =>
        e.querySelector('svg.marks [role="graphics-symbol"], canvas.marks')).length]"""


def charts_drawn(pg: Any, at_least: int, timeout: float = 30) -> int:
    """Wait until the page shows ``at_least`` charts, each one drawn; how many it shows."""
    deadline = time.monotonic() + timeout
    while True:
        shown, drawn = pg.evaluate(_CHARTS)
        if shown >= at_least and drawn == shown:
            return int(shown)
        if time.monotonic() > deadline:
            raise AssertionError(f"{drawn} of {shown} charts drawn, {at_least} expected")
        time.sleep(0.2)


@pytest.mark.parametrize(("path", "shot", "expected", "n_charts"), PAGES, ids=[p[1] for p in PAGES])
def test_every_page_renders_without_an_error_box(
    page: Any, server: str, path: str, shot: str, expected: list[str], n_charts: int
) -> None:
    visit(page, f"{server}/{path}", shot, n_charts)
    text = main_text(page)
    for e in expected:
        assert e in text, (path, e)


def test_the_sidebar_filters_survive_a_page_switch(page: Any, server: str) -> None:
    """The sidebar filters are on every page and survive a switch made by clicking."""
    visit(page, f"{server}/huxi", None)
    page.locator('[data-testid="stSidebarNavLink"]', has_text="Win rates").click()
    settle(page)
    check(page, None)
    sidebar = page.locator('[data-testid="stSidebarUserContent"]').inner_text()
    assert "Runs" in sidebar and "Policy" in sidebar and "Seat" in sidebar


def test_the_reference_page_beside_one_preset(server: str, browser: Any) -> None:
    """The Reference page on the runs of one preset (all runs, then the sidebar's Rules set
    to hunan): its table of figures, each with the difference and whether it differs. In a
    page of its own, so the sidebar's choice stays there."""
    pg = browser.new_page(viewport={"width": 1400, "height": 1400})
    pg.set_default_timeout(30_000)
    try:
        visit(pg, f"{server}/reference?runs=*")
        assert "The selection mixes rule sets" in main_text(pg)
        rules = pg.locator('[data-testid="stSidebarUserContent"] [data-testid="stMultiSelect"]')
        rules.nth(1).click()
        pg.get_by_role("option", name="hunan", exact=True).click()
        pg.keyboard.press("Escape")
        pg.wait_for_function(  # the table's cells are drawn on a canvas: the text above it
            "() => document.querySelector('[data-testid=\"stMain\"]').innerText"
            ".includes('Selection: hunan, 3 runs')"
        )
        settle(pg)
        check(pg, "reference")
        text = main_text(pg)
        assert "learned@hunan in every seat" in text and "base, dup, mixed" in text
        assert "it differs when its interval excludes 0" in text
        table = pg.locator('[data-testid="stTable"] tbody tr')
        assert table.count() == 8
    finally:
        pg.close()


def test_replay_steps_forward_and_back(page: Any, server: str) -> None:
    visit(page, f"{server}/replay?run=base&hand=7&at=decisive", "replay")
    text = main_text(page)
    assert "seat 0" in text and "胡息" in text and "Decision" in text
    assert page.locator(".phz-card").count() > 20
    assert page.locator(".phz-red").count() > 0  # red cards, drawn in red
    start = slider_value(page)
    page.get_by_role("button", name="forward").click()
    settle(page)
    assert slider_value(page) == start + 1
    page.get_by_role("button", name="back").click()
    settle(page)
    page.get_by_role("button", name="back").click()
    settle(page)
    assert slider_value(page) == start - 1
    page.get_by_role("button", name="end").click()
    settle(page)
    check(page, "replay_end")
    assert "Result" in main_text(page) and "settlement" in main_text(page)
    assert "step=" in page.url  # the position is in the URL, to share it


def test_drilldown_into_the_replay(page: Any, server: str) -> None:
    visit(page, f"{server}/drilldown?cond=huxi_ge&value=20", "drilldown")
    text = main_text(page)
    assert "winning 胡息 ≥ 20" in text
    link = page.get_by_role("link", name="in the replay at the decisive step")
    link.click()
    page.wait_for_url("**/replay?*")
    settle(page)
    check(page, "drilldown_to_replay")
    text = main_text(page)
    assert "Replay" in text and "Decision" in text
    assert "Taken: seat" in text and "胡" in text  # the decisive 胡, with its options


def test_a_bar_of_the_distribution_lists_its_hands(page: Any, server: str) -> None:
    """A click on a bar of the 胡息 histogram opens Drill-down on the wins with that 胡息."""
    visit(page, f"{server}/huxi", charts=3)
    bars = page.locator(".vega-embed").first.locator('g.mark-rect [role="graphics-symbol"]')
    tallest = max(range(bars.count()), key=lambda i: bars.nth(i).bounding_box()["height"])
    label = bars.nth(tallest).get_attribute("aria-label")  # "胡息: 18; share of wins: …"
    value = label.split(";")[0].split(":")[1].strip()
    bars.nth(tallest).click()
    page.wait_for_url("**/drilldown?*")
    settle(page)
    check(page, "huxi_bar_to_drilldown")
    assert f"cond=huxi_eq&value={value}" in page.url
    assert f"winning 胡息 = {value}" in main_text(page)


def test_first_visit_to_a_page_url_on_a_fresh_server(store_dir: Path, browser: Any) -> None:
    """A bookmark or a shared link opened first on a just-started dashboard: the page, and no
    "Page not found" dialog (which Streamlit's folder navigation shows for a ``pages/``
    folder before ``st.navigation`` has run)."""
    with dashboard_server(store_dir, "dashboard-server-fresh.log") as base:
        pg = browser.new_page(viewport={"width": 1400, "height": 1600})
        pg.set_default_timeout(30_000)
        try:
            visit(pg, f"{base}/win-rates", "first_visit_win_rates")
            body = str(pg.locator("body").inner_text())
            assert "Page not found" not in body
            assert pg.locator('[role="dialog"]').count() == 0
            assert "By seat" in main_text(pg)  # the page asked for, not the main page
            assert pg.url.endswith("/win-rates?runs=base")  # the first view's selection
        finally:
            pg.close()


def test_replay_review_graph_option_bars_and_a_marker_click(
    store_dir: Path, browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A hand reviewed by ``paohuzi review`` (64 rollouts, the page's default): the Replay
    page draws its win-probability graph and the option bars of the current decision; a
    click on a marker of the graph lands on that step."""
    import shutil

    from click.testing import CliRunner

    from paohuzi.cli.main import main

    d = tmp_path_factory.mktemp("browser-review") / "data"
    shutil.copytree(store_dir, d)
    r = CliRunner().invoke(main, ["review", "base", "7", "-N", "64", "-q", "--data", str(d)])
    assert r.exit_code == 0, r.output
    first = int(r.output.split("\nstep ")[1].split(" ")[0])  # the first reviewed decision
    with dashboard_server(d, "dashboard-server-review.log") as base:
        pg = browser.new_page(viewport={"width": 1400, "height": 2600})
        pg.set_default_timeout(30_000)
        try:
            visit(pg, f"{base}/replay?run=base&hand=7&step={first}&seat=all", charts=3)
            text = main_text(pg)
            assert "Review" in text and "stored review" in text
            assert f"Options at step {first}" in text
            check(pg, "replay_review")
            points = pg.locator(".vega-embed").first.locator(
                'g.mark-symbol [role="graphics-symbol"]'
            )
            labels = [
                points.nth(i).get_attribute("aria-label") or "" for i in range(points.count())
            ]
            steps = [int(x.split("step: ")[1].split(";")[0]) for x in labels if "step: " in x]
            assert len(steps) >= 2, labels
            target = next(s for s in reversed(steps) if s != first)
            points.nth(steps.index(target)).click(force=True)  # through the nearest-point layer
            deadline = time.monotonic() + 30
            while slider_value(pg) != target and time.monotonic() < deadline:
                time.sleep(0.25)
            settle(pg)
            assert slider_value(pg) == target
            assert f"step={target}" in pg.url
            charts_drawn(pg, 3)
            check(pg, "replay_review_marker_clicked")
        finally:
            pg.close()


def test_actions_rate_through_drilldown_to_the_replay_step(page: Any, server: str) -> None:
    """The Actions page: a per-hand rate's link opens Drill-down on those hands, and a hand
    there opens in the Replay page at the step where it happened (a seat's second 跑/提)."""
    visit(page, f"{server}/actions", "actions", charts=2)
    assert "Per hand" in main_text(page) and "Declined when offered" in main_text(page)
    page.get_by_role("link", name="Hands with a 八块").click()
    page.wait_for_url("**/drilldown?*")
    settle(page)
    check(page, "actions_to_drilldown")
    assert "cond=bakuai" in page.url and "八块" in main_text(page)
    page.get_by_role("link", name="in the replay at the step where it happened").click()
    page.wait_for_url("**/replay?*")
    settle(page)
    check(page, "actions_drilldown_to_replay")
    step = slider_value(page)
    assert step > 0 and f"step={step}" in page.url
    assert "Decision" in main_text(page) and ("跑" in main_text(page) or "提" in main_text(page))


def test_a_hand_played_by_clicking_then_its_review_in_the_replay(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``paohuzi dashboard --play`` on an empty store: a hand dealt from the Play page's form
    and played to its end by clicking an option at every decision; the page then shows where
    it is stored, the comparison on the same deal and the review, and a costliest decision's
    link opens the Replay page at that step with the stored review drawn."""
    import re

    d = tmp_path_factory.mktemp("browser-play") / "data"
    with dashboard_server(d, "dashboard-server-play.log", "--play") as base:
        pg = browser.new_page(viewport={"width": 1400, "height": 2000})
        pg.set_default_timeout(30_000)
        try:
            visit(pg, f"{base}/play")
            pg.get_by_label("seed (empty: a new deal)").fill("21")
            pg.get_by_label("compare with (empty: the defaults; none: no comparison)").fill(
                "heuristic,search@4"
            )
            pg.get_by_role("button", name="Deal").click()
            settle(pg)
            check(pg, "play_table")
            for k in range(200):
                if "Stored as run" in main_text(pg):
                    break
                # the last option of decision k (a discard of the highest card, or 过 on a
                # claim): any will do. Its buttons are keyed by the decisions made, so a
                # button the previous script run left on the page while this one was still
                # drawing (a stale click, which the page ignores) is never the one clicked.
                pg.locator(f'[class*="st-key-pl_opt_{k}_"] button').last.click()
                # the next decision's buttons, or the end (stored, compared and reviewed)
                pg.wait_for_function(
                    f"""() => document.querySelector('[class*="st-key-pl_opt_{k + 1}_"]')
                        || document.body.innerText.includes('Stored as run')""",
                    timeout=180_000,
                )
                settle(pg, still_for=2, every=0.1)
            else:
                raise AssertionError("the hand did not end")
            check(pg, "play_done")
            text = main_text(pg)
            assert "Stored as run play hand 0 (seat 0)" in text
            assert "the same deal: you" in text and "search@4" in text
            assert "Your decisions, reviewed" in text
            link = pg.get_by_role("link", name=re.compile(r"^step \d+: you played"))
            if link.count() == 0:  # a hand without a costly decision: the whole hand then
                link = pg.get_by_role("link", name="the whole hand in the Replay page")
            href = link.first.get_attribute("href") or ""
            step = int(href.split("step=")[1].split("&")[0])
            link.first.click()
            pg.wait_for_url("**/replay?*")
            settle(pg)
            charts_drawn(pg, 1)
            check(pg, "play_review_in_replay")
            assert slider_value(pg) == step and "run=play" in pg.url
            assert "stored review" in main_text(pg)
        finally:
            pg.close()


# ---------------------------------------------------------------------------------------------
# Issue 60: the first view, a mixed selection, the URL, tables that fit, downloads
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_server(store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A store like ``make demo``'s: the fixture's runs of three rule sets, its main run with
    a small sample reviewed (as paohuzi.demo_data stores one), and the reference file; the
    dashboard on it."""
    import shutil

    from click.testing import CliRunner
    from reference_helpers import write_reference

    from paohuzi.cli.main import main

    d = tmp_path_factory.mktemp("browser-demo") / "data"
    shutil.copytree(store_dir, d)
    r = CliRunner().invoke(main, ["review", "base", "--sample", "4", "-N", "8", "-q", "-w", "1",
                                  "--data", str(d)])  # fmt: skip
    assert r.exit_code == 0, r.output
    ref = write_reference(tmp_path_factory.mktemp("browser-demo-ref") / "reference.json")
    with dashboard_server(d, "dashboard-server-demo.log", "--reference", str(ref)) as base:
        yield base


#: Each page of the demo-like store: its path (no selection: the first view) and what it
#: must show — content, not a warning.
CONTENT = [
    ("", ["Headline rates · hunan", "One rule set: hunan, 1 run (base)"]),
    ("win-rates", ["By seat", "By policy", "Convergence"]),
    ("huxi", ["Distributions", "By 名堂"]),
    ("huangzhuang", ["荒庄 rate", "Dealer retention"]),
    ("mingtang", ["花样 half"]),
    ("compare", ["Headline numbers", "名堂 frequencies"]),
    ("reference", ["Selection: hunan, 1 run (base)", "it differs when"]),
    ("actions", ["Per hand", "Options per real"]),
    ("drilldown?cond=huxi_ge&value=20", ["winning 胡息 ≥ 20"]),
    ("replay?run=base&hand=7&step=1000000", []),  # the hand's end: set in the test
    ("review", ["run base", "rollouts"]),
    ("sql", ["rows in"]),
    ("play", ["paohuzi dashboard --play"]),
]

#: Tables wider than their container (sideways scrolling): an HTML table (st.table) whose
#: scroll box is wider than it shows, a grid (st.dataframe) whose scroller is.
_CLIPPED = """() => {
  const out = [];
  for (const e of document.querySelectorAll('[data-testid="stTable"] table')) {
    const box = e.parentElement;
    if (box.scrollWidth > box.clientWidth + 1) out.push(['table', box.scrollWidth, box.clientWidth]);
  }
  for (const e of document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller')) {
    if (e.scrollWidth > e.clientWidth + 1) out.push(['grid', e.scrollWidth, e.clientWidth]);
  }
  return out;
}"""
_TABLES = """() => document.querySelectorAll(
    '[data-testid="stTable"], [data-testid="stDataFrame"]').length"""


def _hand_end(store: Path) -> int:
    from replay.replayer.hand import load_hand

    return int(load_hand(store, "base", 7).n_steps)


@pytest.mark.parametrize("width", [1024, 1400])
def test_every_page_shows_content_and_its_tables_fit(
    demo_server: str, browser: Any, store_dir: Path, width: int
) -> None:
    """At 1,024 and 1,400 pixels: every page is listed in the sidebar (none behind "View
    more"), opens on the first view with content and no warning, carries the selection in
    its URL, and no table is wider than the page (none scrolls sideways)."""
    pg = browser.new_page(viewport={"width": width, "height": 2400})
    pg.set_default_timeout(30_000)
    try:
        for path, expected in CONTENT:
            if path.startswith("replay"):
                path = path.replace("1000000", str(_hand_end(store_dir)))
                expected = ["Result", "settlement"]
            visit(pg, f"{demo_server}/{path}")
            name = path.split("?")[0] or "overview"
            check(pg, f"width{width}_{name}")
            text = main_text(pg)
            for e in expected:
                assert e in text, (path, e)
            warnings = pg.locator('[data-testid="stAlertContentWarning"]')
            assert warnings.count() == 0, (path, warnings.first.inner_text())
            assert "runs=base" in pg.url, pg.url  # the selection, in every page's URL
            assert pg.evaluate(_CLIPPED) == [], (path, width)
            if name not in ("play", "sql"):
                assert pg.evaluate(_TABLES) > 0, path
        links = pg.locator('[data-testid="stSidebarNavLink"]')
        assert links.count() == 13 and all(links.nth(i).is_visible() for i in range(13))
        assert "View" not in pg.locator('[data-testid="stSidebarNav"]').inner_text()
    finally:
        pg.close()


def _headline(pg: Any) -> str:
    h = pg.locator('[data-testid="stMain"] h3', has_text="Headline rates")
    return str(h.inner_text()).strip()


def test_first_view_a_mixed_selection_and_the_link_of_each(demo_server: str, browser: Any) -> None:
    """The first view's headline is one rule set's (the main run's); emptying the sidebar's
    Runs (every run: three rule sets) gives a row per rule set, never one pooled number; the
    URL of each, opened in a new tab, shows the same view. Screenshots: first_view.png and
    mixed_selection.png in tests/artifacts/."""
    pg = browser.new_page(viewport={"width": 1400, "height": 1400})
    pg.set_default_timeout(30_000)
    try:
        visit(pg, demo_server, "first_view")
        assert _headline(pg) == "Headline rates · hunan"
        assert pg.url.endswith("?runs=base")
        first = main_text(pg)
        runs = pg.locator('[data-testid="stSidebarUserContent"] [data-testid="stMultiSelect"]')
        runs.first.locator("input").click()
        pg.keyboard.press("Backspace")  # the one run chosen: none left, every run
        pg.keyboard.press("Escape")
        pg.wait_for_function("() => /runs=(%2A|\\*)/.test(location.search)")
        settle(pg)
        check(pg, "mixed_selection")
        assert _headline(pg) == "Headline rates by rule set (3 rule sets)"
        rows = pg.locator('[data-testid="stTable"]').nth(1).locator("tbody tr")
        assert [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())] == [
            "hunan",
            "hunan-4p",
            "hunan min_huxi=10",
        ]
        mixed = main_text(pg)
        for url, want in ((pg.url, mixed), (f"{demo_server}/?runs=base", first)):
            other = browser.new_page(viewport={"width": 1400, "height": 1400})
            other.set_default_timeout(30_000)
            try:
                visit(other, url)
                assert main_text(other) == want
            finally:
                other.close()
    finally:
        pg.close()


def test_a_tables_csv_is_the_rows_it_shows(demo_server: str, browser: Any) -> None:
    """The CSV button under the Overview's runs table downloads that table's rows."""
    import csv
    import io

    pg = browser.new_page(viewport={"width": 1400, "height": 1400}, accept_downloads=True)
    pg.set_default_timeout(30_000)
    try:
        visit(pg, demo_server)
        shown = pg.locator('[data-testid="stTable"]').first.locator("tbody tr")
        cells = [shown.nth(i).locator("td").nth(1).inner_text() for i in range(shown.count())]
        with pg.expect_download() as got:
            pg.locator(".st-key-dl_runs_csv button").first.click()
        assert got.value.suggested_filename == "paohuzi-runs.csv"
        text = Path(got.value.path()).read_text(encoding="utf-8-sig")
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [r["run"] for r in rows] == cells == ["base", "dup", "four", "min10", "mixed"]
        assert list(rows[0]) == ["selected", "run", "rules", "seats", "policies", "hands",
                                 "state", "created", "seed"]  # fmt: skip
        check(pg, None)
    finally:
        pg.close()


def test_the_sidebar_count_follows_the_store(
    store_dir: Path, browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Hands recorded while a page stays open (here a run simulated beside it): the
    sidebar's count of runs and hands follows within seconds, without a click, and says the
    page was drawn before; its button redraws the page on the store as it is now."""
    from dash_helpers import copy_store, simulate

    d = copy_store(store_dir, tmp_path_factory.mktemp("browser-live") / "data", ["base"])
    with dashboard_server(d, "dashboard-server-live.log") as base:
        pg = browser.new_page(viewport={"width": 1400, "height": 1400})
        pg.set_default_timeout(30_000)
        try:
            visit(pg, base)
            side = pg.locator('[data-testid="stSidebarUserContent"]')
            assert "In the store: 1 run, 240 hands" in side.inner_text()
            simulate(d, "late", ["-n", "30", "--seed", "3"])
            pg.wait_for_function(
                "() => document.querySelector('[data-testid=\"stSidebarUserContent\"]')"
                ".innerText.includes('In the store: 2 runs, 270 hands')",
                timeout=30_000,
            )
            assert "The store changed since this page was drawn" in side.inner_text()
            assert "late" not in main_text(pg)  # the page itself: as drawn
            pg.get_by_role("button", name="Show the store as it is now").click()
            pg.wait_for_function(
                "() => document.querySelector('[data-testid=\"stMain\"]').innerText"
                ".includes('late')"
            )
            settle(pg)
            check(pg, "sidebar_count_followed")
            assert "changed since" not in side.inner_text()
        finally:
            pg.close()
