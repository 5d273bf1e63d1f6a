"""Render time of every dashboard page on a store (not a test; run it by hand).

    .venv/bin/python tests/dashboard/perf_pages.py DATA_DIR [--runs 3] [--browser]

Each page is run through Streamlit's AppTest in this process (the script, its queries and
the element tree; no browser). Reported per page: ``cold`` = the data caches emptied first
(``st.cache_data.clear()``), the DuckDB catalog kept, i.e. the first visit of that page on a
running dashboard; ``warm`` = the same page again. The catalog build (once per server and
store change) is timed on its own. With ``--browser``, a fresh ``paohuzi dashboard`` is also
started on the store and each page is opened once in chromium (a new session per page):
the time from navigation until the script run is over and the page is still, as a user
sees it (the first page pays for the catalog; the browser's own start-up is included).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PAGES = {
    "overview": "views/overview.py",
    "win_rates": "views/win_rates.py",
    "huxi": "views/huxi.py",
    "huangzhuang": "views/huangzhuang.py",
    "mingtang": "views/mingtang.py",
    "compare": "views/compare.py",
    "replay": "views/replay.py",
    "drilldown": "views/drilldown.py",
    "drilldown_popao": "views/drilldown.py?cond=popao",
    "sql": "views/sql.py",
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--browser", action="store_true")
    args = ap.parse_args()
    if args.browser:
        browser_times(Path(args.data))
        return
    os.environ["PAOHUZI_DATA"] = str(Path(args.data).resolve())

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from replay.store.catalog import open_catalog
    from replay.store.scan import scan_store

    t = time.perf_counter()
    state = scan_store(args.data)
    t_scan = time.perf_counter() - t
    t = time.perf_counter()
    open_catalog(state).close()
    t_cat = time.perf_counter() - t
    hands = sum(r.hands for r in state.usable_runs)
    print(f"store {args.data}: {len(state.usable_runs)} runs, {hands:,} hands")
    print(f"scan (manifests + footers) {t_scan:.2f} s, catalog build {t_cat:.2f} s")

    app = str(ROOT / "dashboard" / "app.py")
    at = AppTest.from_file(app, default_timeout=300)
    at.run()  # builds the shared connection once
    print(f"{'page':18s} {'cold (s)':>9s} {'warm (s)':>9s}  errors")
    for name, spec in PAGES.items():
        path, _, query = spec.partition("?")
        colds, warms = [], []
        problems = 0
        for _ in range(args.runs):
            st.cache_data.clear()
            at = AppTest.from_file(app, default_timeout=300)
            at.run()
            at.switch_page(path)
            if query:
                k, _, v = query.partition("=")
                at.query_params[k] = v
            st.cache_data.clear()
            t = time.perf_counter()
            at.run()
            colds.append(time.perf_counter() - t)
            t = time.perf_counter()
            at.run()
            warms.append(time.perf_counter() - t)
            problems += len(at.exception) + len(at.error)
        print(
            f"{name:18s} {statistics.median(colds):9.2f} {statistics.median(warms):9.2f}"
            f"  {problems}"
        )


#: page: (navigation label, its title)
BROWSER_PAGES = {
    "overview": ("Overview", "跑胡子 — overview"),
    "win_rates": ("Win rates", "Win rates"),
    "huxi": ("胡息 and score", "胡息 and score"),
    "huangzhuang": ("荒庄", "荒庄"),
    "mingtang": ("名堂", "名堂"),
    "compare": ("Compare", "Compare"),
    "replay": ("Replay", "Replay"),
    "drilldown": ("Drill-down", "Drill-down"),
    "sql": ("SQL", "SQL"),
}


def browser_times(data: Path) -> None:
    import signal
    import socket
    import subprocess
    import urllib.request

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).parent))
    from test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS, ERRORS, settle

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from replay.cli.main import main; main()", "dashboard", "--data",
         str(data), "--port", str(port), "--address", "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            pg = browser.new_page(viewport={"width": 1400, "height": 1600})
            t = time.perf_counter()
            pg.goto(base)
            settle(pg)
            # settle() waits for 0.75 s of stillness, which is not part of the render
            print(
                f"first load (tab, bundle, catalog, overview): {time.perf_counter() - t - 0.75:.2f} s"
            )
            print(f"{'page':18s} {'click (s)':>9s}  errors   (first visit, clicked in the menu)")
            order = [*list(BROWSER_PAGES)[1:], "overview"]
            for name in order:
                label, title = BROWSER_PAGES[name]
                t = time.perf_counter()
                pg.locator('[data-testid="stSidebarNavLink"]', has_text=label).first.click()
                pg.wait_for_function(
                    "t => document.querySelector('h1') && document.querySelector('h1')"
                    ".innerText.includes(t)",
                    arg=title,
                )
                settle(pg)
                took = time.perf_counter() - t - 0.75
                print(f"{name:18s} {took:9.2f}  {pg.locator(ERRORS).count()}")
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
