"""Render time of every dashboard page on a store (not a test; run it by hand).

    .venv/bin/python tests/dashboard/perf_pages.py DATA_DIR [--runs 3] [--browser]

"Cold" below means every ``st.cache_data`` entry emptied (the query results), the store's
checked scan and the DuckDB catalog connection built on it (``st.cache_resource``, made once
per server and store change; the scan and catalog lines time them on their own) kept: the
first visit of a page on a running dashboard.

Without ``--browser``, each page is run through Streamlit's AppTest in this process (the
script, its queries and the element tree; no browser), ``--runs`` times, and the medians are
printed: ``cold`` = a fresh AppTest switched to the page, the caches emptied, the page's
run; ``warm`` = the same page run again right after.

With ``--browser``, ``paohuzi dashboard``'s Streamlit server is started on the store (in a
wrapper that empties ``st.cache_data`` on SIGUSR1) and each page is measured ``--runs``
times in Debian's chromium, the median printed. One measurement: a new browser context
(a new session, no browser cache), the app loaded on a light page (replay; overview for
the replay page itself) and settled, the data caches emptied, then the page's link clicked
in the sidebar menu; the time from the click until the page shows its title with no script
run under way (no status widget, no skeleton) and stays so for 0.75 s, counted to the
start of that stillness (polled every 50 ms). This is the page as a user switching
to it sees it; the app's own first load (bundle, websocket, catalog, overview) is printed
once, before.
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
#: seconds a page may take (the raw-hands path on a big store is slow)
TIMEOUT = 1800

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
    ap.add_argument("--serve", nargs=2, metavar=("PORT", "ACK"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(Path(args.data), int(args.serve[0]), Path(args.serve[1]))
        return
    if args.browser:
        browser_times(Path(args.data), args.runs)
        return
    os.environ["PAOHUZI_DATA"] = str(Path(args.data).resolve())

    import logging

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    # not two warnings per cache_data.clear() outside a script run ("no runtime found",
    # "missing ScriptRunContext"); a filter, since streamlit resets its loggers' levels
    for name in ("caching.cache_data_api", "scriptrunner_utils.script_run_context"):
        logging.getLogger(f"streamlit.runtime.{name}").addFilter(
            lambda r: r.levelno >= logging.ERROR
        )

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
    at = AppTest.from_file(app, default_timeout=TIMEOUT)
    at.run()  # builds the shared connection once
    print(f"{'page':18s} {'cold (s)':>9s} {'warm (s)':>9s}  errors")
    for name, spec in PAGES.items():
        path, _, query = spec.partition("?")
        colds, warms = [], []
        problems = 0
        for _ in range(args.runs):
            st.cache_data.clear()
            at = AppTest.from_file(app, default_timeout=TIMEOUT)
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


#: page: (navigation label, its title, its URL path)
BROWSER_PAGES = {
    "overview": ("Overview", "跑胡子 — overview", ""),
    "win_rates": ("Win rates", "Win rates", "win-rates"),
    "huxi": ("胡息 and score", "胡息 and score", "huxi"),
    "huangzhuang": ("荒庄", "荒庄", "huangzhuang"),
    "mingtang": ("名堂", "名堂", "mingtang"),
    "compare": ("Compare", "Compare", "compare"),
    "replay": ("Replay", "Replay", "replay"),
    "drilldown": ("Drill-down", "Drill-down", "drilldown"),
    "sql": ("SQL", "SQL", "sql"),
}

#: the page is done: it shows title ``t``, no script run is under way, nothing is loading
_DONE = """t => !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]')
    && !!document.querySelector('h1') && document.querySelector('h1').innerText.includes(t)"""


def serve(data: Path, port: int, ack: Path) -> None:
    """``paohuzi dashboard``'s Streamlit server in this process, emptying ``st.cache_data``
    on SIGUSR1 (then writing a new number into ``ack``)."""
    import signal
    import threading

    from replay.cli.dashboard import streamlit_command

    cmd, env = streamlit_command(data, port, "127.0.0.1")
    os.environ.update(env)
    import streamlit as st
    from streamlit.web import cli

    def clear() -> None:
        st.cache_data.clear()
        ack.write_text(str(time.monotonic_ns()))

    # the handler runs on the event loop's thread: clear on another, never blocking it
    signal.signal(signal.SIGUSR1, lambda *_: threading.Thread(target=clear).start())
    assert cmd[1:4] == ["-m", "streamlit", "run"], cmd
    sys.argv = ["streamlit", *cmd[3:]]
    cli.main(prog_name="streamlit")


def settled(pg: object, title: str, since: float, still: float = 0.75) -> float:
    """Seconds from ``since`` until the page was done (:data:`_DONE`) and stayed so for
    ``still`` seconds, counted to the start of that stillness."""
    start = None
    deadline = time.perf_counter() + TIMEOUT
    while time.perf_counter() < deadline:
        now = time.perf_counter()
        if pg.evaluate(_DONE, title):  # type: ignore[attr-defined]
            if start is None:
                start = now
            elif now - start >= still:
                return start - since
        else:
            start = None
        time.sleep(0.05)
    raise TimeoutError(f"page {title!r} did not settle in {TIMEOUT} s")


def browser_times(data: Path, runs: int) -> None:
    import shutil
    import signal
    import socket
    import subprocess
    import tempfile
    import urllib.request

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).parent))
    from test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS, ERRORS

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ack = Path(tempfile.mkdtemp(prefix="perf-pages-")) / "cleared"
    proc = subprocess.Popen(
        [sys.executable, __file__, str(data), "--serve", str(port), str(ack)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def clear_caches() -> None:
        before = ack.read_text() if ack.exists() else ""
        os.kill(proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 30
        while (ack.read_text() if ack.exists() else "") == before:
            if time.monotonic() > deadline:
                raise TimeoutError("the dashboard did not empty its caches")
            time.sleep(0.02)

    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{base}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            ctx = browser.new_context(viewport={"width": 1400, "height": 1600})
            pg = ctx.new_page()
            pg.set_default_timeout(TIMEOUT * 1000)
            t = time.perf_counter()
            pg.goto(base)
            took = settled(pg, BROWSER_PAGES["overview"][1], t)
            print(f"first load (tab, bundle, catalog, overview): {took:.2f} s")
            ctx.close()
            times: dict[str, list[float]] = {name: [] for name in BROWSER_PAGES}
            errors = dict.fromkeys(BROWSER_PAGES, 0)
            for _ in range(runs):
                for name, (label, title, _) in BROWSER_PAGES.items():
                    land = "overview" if name == "replay" else "replay"
                    ctx = browser.new_context(viewport={"width": 1400, "height": 1600})
                    pg = ctx.new_page()
                    pg.set_default_timeout(TIMEOUT * 1000)
                    pg.goto(f"{base}/{BROWSER_PAGES[land][2]}")
                    settled(pg, BROWSER_PAGES[land][1], time.perf_counter())
                    clear_caches()
                    link = pg.locator('[data-testid="stSidebarNavLink"]', has_text=label).first
                    t = time.perf_counter()
                    link.click()
                    times[name].append(settled(pg, title, t))
                    errors[name] += pg.locator(ERRORS).count()
                    ctx.close()
            print(
                f"{'page':18s} {'median (s)':>10s} {'min':>6s} {'max':>6s}  errors"
                f"   (clicked in the menu, caches cold, {runs} runs)"
            )
            for name, ts in times.items():
                print(
                    f"{name:18s} {statistics.median(ts):10.2f} {min(ts):6.2f} {max(ts):6.2f}"
                    f"  {errors[name]}"
                )
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        shutil.rmtree(ack.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
