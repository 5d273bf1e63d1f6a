"""Render time of every dashboard page on a store (not a test; run it by hand).

    .venv/bin/python -m bench.pages DATA_DIR [--runs 3] [--browser] [--pages a,b]

"Cold" below means every ``st.cache_data`` entry emptied (the query results), the store's
checked scan and the DuckDB catalog connection built on it (``st.cache_resource``, made once
per server and store change; the scan and catalog lines time them on their own) kept: the
first visit of a page on a running dashboard.

Without ``--browser``, each page is run through Streamlit's AppTest in this process (the
script, its queries and the element tree; no browser), ``--runs`` times, and the medians are
printed: ``cold`` = a fresh AppTest switched to the page, the caches emptied, the page's
run; ``warm`` = the same page run again right after.

With ``--browser``, ``paohuzi dashboard``'s Streamlit server is started on the store (in a
wrapper that empties ``st.cache_data`` on SIGUSR1 and notes when each script run ends) and
each page is measured ``--runs`` times in Debian's chromium, in two ways, the medians
printed:

* ``new tab``: a new browser context (a new session, nothing cached in the browser), the app
  loaded on a light page (replay; overview for the replay page itself) and settled, the data
  caches emptied, then the page's link clicked in the sidebar menu. This includes loading
  and compiling the front-end code of the page's elements (Streamlit loads the code of a
  kind of element, such as charts, when a page first shows one): a page's first visit in a
  tab.
* ``open tab``: the same, but in a tab that has already shown the page once (light page,
  the page, the light page again, by the menu, in one document), then the data caches
  emptied and the page clicked: a switch between pages while exploring.

The time runs from the click until the page is done and stays so for 0.75 s, counted to
the start of that stillness (polled every 30 ms): the page's script run is over (the
server's note), the page shows its title, no status widget and no skeleton, every chart has
drawn its marks, and the number of elements, charts and tables stays the same. This is the
page as a user switching to it sees it; the app's own first load (bundle, websocket,
catalog, overview) is printed once, before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
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
    "actions": "views/actions.py",
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
    ap.add_argument(
        "--pages", default=",".join(PAGES), help="the pages to time, by name, comma-separated"
    )
    ap.add_argument("--serve", nargs=2, metavar=("PORT", "ACK"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    pages = [p for p in args.pages.split(",") if p]
    unknown = [p for p in pages if p not in PAGES]
    if unknown:
        ap.error(f"unknown page {unknown[0]!r}: one of {', '.join(PAGES)}")
    if args.serve:
        serve(Path(args.data), int(args.serve[0]), Path(args.serve[1]))
        return
    if args.browser:
        browser_times(Path(args.data), args.runs, pages)
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
    for name in pages:
        path, _, query = PAGES[name].partition("?")
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
    "actions": ("Actions", "Actions", "actions"),
    "replay": ("Replay", "Replay", "replay"),
    "drilldown": ("Drill-down", "Drill-down", "drilldown"),
    "sql": ("SQL", "SQL", "sql"),
}

#: the page as drawn: "" while not done (a script run under way in the browser's view, a
#: skeleton, not yet its title ``t``, a chart without its marks), else the counts of its
#: elements, charts and tables (the page is still once they stay the same)
_DRAWN = """t => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return '';
  if (document.querySelector('[data-testid="stSkeleton"]')) return '';
  const h = document.querySelector('h1');
  if (!h || !h.innerText.includes(t)) return '';
  const charts = [...document.querySelectorAll('.vega-embed')];
  const drawn = charts.filter(e => e.querySelector(
      'svg.marks [role="graphics-symbol"], canvas.marks')).length;
  if (drawn < charts.length) return '';
  return [document.querySelectorAll('[data-testid="stElementContainer"]').length,
          charts.length, document.querySelectorAll('[data-testid="stDataFrame"]').length].join();
}"""


def serve(data: Path, port: int, ack: Path) -> None:
    """``paohuzi dashboard``'s Streamlit server in this process, emptying ``st.cache_data``
    on SIGUSR1 (then writing a new number into ``ack``) and writing the time (``time.time()``)
    each script run ends into ``ack`` with the suffix ``.ran``."""
    import signal
    import threading

    from streamlit.runtime.scriptrunner import script_runner

    from paohuzi.cli.dashboard import streamlit_command

    cmd, env = streamlit_command(data, port, "127.0.0.1")
    os.environ.update(env)
    import streamlit as st

    def clear() -> None:
        st.cache_data.clear()
        ack.write_text(str(time.monotonic_ns()))

    ran = ack.with_suffix(".ran")
    run_script = script_runner.ScriptRunner._run_script

    def noted(self: script_runner.ScriptRunner, rerun_data: Any) -> None:
        try:
            run_script(self, rerun_data)
        finally:
            ran.write_text(repr(time.time()))

    script_runner.ScriptRunner._run_script = noted  # type: ignore[method-assign]
    # the handler runs on the event loop's thread: clear on another, never blocking it
    signal.signal(signal.SIGUSR1, lambda *_: threading.Thread(target=clear).start())
    assert cmd[1:4] == ["-m", "dashboard.server", "run"], cmd
    from dashboard import server

    server.main(cmd[3:])


def _ran_at(ran: Path) -> float:
    """When the server's last script run ended (0 before the first, or while the note is
    being rewritten)."""
    try:
        return float(ran.read_text())
    except (OSError, ValueError):
        return 0.0


def settled(
    pg: object, title: str, since: float, ran: Path | None = None, still: float = 0.75
) -> float:
    """Seconds from ``since`` (a ``time.time()``) until the page was drawn (:data:`_DRAWN`)
    and stayed the same for ``still`` seconds, counted to the start of that stillness, and
    (with ``ran``, the server's note of its last script run's end) not before a script run
    that ended after ``since``."""
    start, last = 0.0, ""
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        now = time.time()
        drawn = pg.evaluate(_DRAWN, title)  # type: ignore[attr-defined]
        if drawn != last:
            start, last = now, drawn
        elif drawn and now - start >= still:
            end = _ran_at(ran) if ran is not None else since
            if end >= since:
                return max(start, end) - since
        time.sleep(0.03)
    raise TimeoutError(f"page {title!r} did not settle in {TIMEOUT} s")


def browser_times(data: Path, runs: int, pages: list[str]) -> None:
    pages = [p for p in pages if p in BROWSER_PAGES]
    import shutil
    import signal
    import socket
    import subprocess
    import tempfile
    import urllib.request

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    from dash_helpers import CHROMIUM, CHROMIUM_ARGS, ERRORS

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ack = Path(tempfile.mkdtemp(prefix="perf-pages-")) / "cleared"
    ran = ack.with_suffix(".ran")
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

    def click(pg: Any, name: str) -> float:
        label, title, _ = BROWSER_PAGES[name]
        link = pg.locator('[data-testid="stSidebarNavLink"]', has_text=label).first
        t = time.time()
        link.click()
        return settled(pg, title, t, ran)

    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{base}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

            def tab() -> Any:
                ctx = browser.new_context(viewport={"width": 1400, "height": 1600})
                pg = ctx.new_page()
                pg.set_default_timeout(TIMEOUT * 1000)
                return pg

            pg = tab()
            t = time.time()
            pg.goto(base)
            took = settled(pg, BROWSER_PAGES["overview"][1], t, ran)
            print(f"first load (tab, bundle, catalog, overview): {took:.2f} s")
            pg.context.close()
            modes = ("new tab", "open tab")
            times: dict[tuple[str, str], list[float]] = {
                (m, name): [] for m in modes for name in pages
            }
            errors = dict.fromkeys(pages, 0)
            for _ in range(runs):
                for name in pages:
                    land = "overview" if name == "replay" else "replay"
                    for mode in modes:
                        pg = tab()
                        t = time.time()
                        pg.goto(f"{base}/{BROWSER_PAGES[land][2]}")
                        settled(pg, BROWSER_PAGES[land][1], t, ran)
                        if mode == "open tab":
                            click(pg, name)
                            click(pg, land)
                        clear_caches()
                        times[(mode, name)].append(click(pg, name))
                        errors[name] += pg.locator(ERRORS).count()
                        pg.context.close()
            print(
                f"{'page':14s} {'new tab':>8s} {'min':>5s} {'max':>5s}"
                f" {'open tab':>9s} {'min':>5s} {'max':>5s}  errors"
                f"   (seconds; clicked in the menu, caches cold, {runs} runs, medians)"
            )
            for name in pages:
                cols = ""
                for mode in modes:
                    ts = times[(mode, name)]
                    cols += f" {statistics.median(ts):8.2f} {min(ts):5.2f} {max(ts):5.2f}"
                print(f"{name:14s}{cols}   {errors[name]}")
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        shutil.rmtree(ack.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
