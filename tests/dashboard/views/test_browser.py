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
    ("reference", "reference_mixed", ["The selection mixes rule sets", "hunan-4p (four)"], 0),
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
    """The Reference page on the runs of one preset (the sidebar's Rules set to hunan): its
    table of figures, each with the difference and whether it differs. In a page of its own,
    so the sidebar's choice stays there."""
    pg = browser.new_page(viewport={"width": 1400, "height": 1400})
    pg.set_default_timeout(30_000)
    try:
        visit(pg, f"{server}/reference")
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
        table = pg.locator('[data-testid="stDataFrame"]')
        assert table.count() == 1 and table.first.bounding_box()["height"] > 200  # 8 rows
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
            assert pg.url.endswith("/win-rates")
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
