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
* ``open tab``: then, in the same tab (one document), the light page again by the menu,
  the data caches emptied and the page clicked: a tab that has already shown the page once,
  as when one switches between pages while exploring.

The time runs from the click until the page is done and stays so for 0.75 s, counted to
the start of that stillness (polled every 30 ms): the page's script run is over (the
server's note), the page shows its title, no status widget and no skeleton, every chart has
drawn its marks, and the number of elements, charts and tables stays the same. This is the
page as a user switching to it sees it; the app's own first load (bundle, websocket,
catalog, overview) is printed once, before.

The browser benchmark always ends, and leaves nothing running:

* each measurement is printed as it is made (then the medians);
* a page has ``--page-timeout`` seconds (default 120) to settle, the server's start and the
  first load ``--load-timeout`` (default 300): a page over its limit is named (``TIME LIMIT:
  page NAME (mode, run k)``), not measured again, and the page server restarted; the
  benchmark then exits 1. A browser call stuck past every limit is stopped by a watchdog
  (exit 3);
* the page server runs in a process group of its own and dies with the benchmark (Linux's
  parent-death signal); on every way out (a normal end, an error, a time limit, SIGINT,
  SIGTERM, SIGHUP, the interpreter's exit) the server's group and every process below the
  benchmark (Playwright's driver, chromium) are stopped
  (tests/bench/test_pages_stops.py kills it and looks).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
#: seconds a page may take (``--page-timeout``): then it is named and not measured again
PAGE_TIMEOUT = 120.0
#: seconds a page before the timed click (the landing page, the open tab's first visit) must
#: stay still to count as done: shorter than the timed page's 0.75 s, which it only precedes
LEAD_STILL = 0.3
#: seconds the server's start and the app's first load may take (``--load-timeout``)
LOAD_TIMEOUT = 300.0

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
    "reference": "views/reference.py",
    "review": "views/review.py",
    "play": "views/play.py",
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
    ap.add_argument(
        "--page-timeout",
        type=float,
        default=PAGE_TIMEOUT,
        help="seconds a page may take; a page over it is named and not measured again"
        f" (default {PAGE_TIMEOUT:.0f})",
    )
    ap.add_argument(
        "--load-timeout",
        type=float,
        default=LOAD_TIMEOUT,
        help=f"seconds the server's start and the first load may take (default {LOAD_TIMEOUT:.0f})",
    )
    ap.add_argument(
        "--drop-caches",
        action="store_true",
        help="with --browser: empty the kernel's page cache (root: /proc/sys/vm/drop_caches)"
        " before the first load and before each page's click, so each is timed with the"
        " store's files on disk, not in memory",
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
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        sys.exit(browser_times(Path(args.data), args.runs, pages, args.page_timeout,
                               args.load_timeout, args.drop_caches))  # fmt: skip
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
    limit = args.page_timeout
    at = AppTest.from_file(app, default_timeout=args.load_timeout)
    at.run()  # builds the shared connection once
    print(f"{'page':18s} {'cold (s)':>9s} {'warm (s)':>9s}  errors", flush=True)
    over = False
    for name in pages:
        path, _, query = PAGES[name].partition("?")
        colds, warms = [], []
        problems = 0
        try:
            for _ in range(args.runs):
                st.cache_data.clear()
                at = AppTest.from_file(app, default_timeout=limit)
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
        except RuntimeError as e:  # AppTest's "script run timed out"
            over = True
            print(f"TIME LIMIT: page {name}: {e}", flush=True)
            continue
        print(
            f"{name:18s} {statistics.median(colds):9.2f} {statistics.median(warms):9.2f}"
            f"  {problems}",
            flush=True,
        )
    if over:  # a page's script run may still be going in a thread of this process
        sys.stdout.flush()
        os._exit(1)


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
    "reference": ("Reference", "Reference", "reference"),
    "review": ("Review", "Review", "review"),
    "play": ("Play", "Play", "play"),
    "sql": ("SQL", "SQL", "sql"),
}

#: The menu's "View N more" button: Streamlit shows the first ten pages of the menu (the app
#: has 13); a link past them is not on the page until it is clicked.
NAV_MORE = '[data-testid="stSidebarNavViewButton"]'

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

    _die_with_parent()
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


def _die_with_parent() -> None:
    """SIGKILL for this process when the benchmark that started it dies, however it dies
    (even by SIGKILL, which no handler of the benchmark sees): Linux's parent-death signal."""
    import ctypes
    import signal

    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the benchmark died before the signal was set
        os._exit(1)


def _ran_at(ran: Path) -> float:
    """When the server's last script run ended (0 before the first, or while the note is
    being rewritten)."""
    try:
        return float(ran.read_text())
    except (OSError, ValueError):
        return 0.0


def settled(
    pg: object,
    title: str,
    since: float,
    ran: Path | None = None,
    still: float = 0.75,
    timeout: float = PAGE_TIMEOUT,
) -> float:
    """Seconds from ``since`` (a ``time.time()``) until the page was drawn (:data:`_DRAWN`)
    and stayed the same for ``still`` seconds, counted to the start of that stillness, and
    (with ``ran``, the server's note of its last script run's end) not before a script run
    that ended after ``since``; :class:`PageTimeLimit` naming the page after ``timeout``
    seconds."""
    start, last = 0.0, ""
    deadline = since + timeout
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
    raise PageTimeLimit(f"page {title!r} did not settle in {timeout:g} s")


class PageTimeLimit(Exception):
    """A page (named) did not settle within the benchmark's time limit for a page."""


def _proc_stat(pid: int) -> tuple[int, int, int] | None:
    """(parent pid, process group, start time in clock ticks) of a live process, from
    ``/proc/PID/stat``; None when it is gone (or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[2]), int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """Every live process below ``root`` (its children, theirs …): pid → start time (the
    pair names a process: a pid can be reused, never with the same start time)."""
    parent: dict[int, int] = {}
    start: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            got = _proc_stat(int(name))
            if got is not None:
                parent[int(name)], _, start[int(name)] = got
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        p = todo.pop()
        for child, pp in parent.items():
            if pp == p and child not in out:
                out[child] = start[child]
                todo.append(child)
    return out


def alive(procs: dict[int, int]) -> dict[int, int]:
    """Those of ``procs`` (pid → start time) still running (the same process, not a reuse)."""
    out = {}
    for pid, started in procs.items():
        got = _proc_stat(pid)
        if got is not None and got[2] == started:
            out[pid] = started
    return out


class Reaper:
    """Every process the browser benchmark starts (the page server's process group, the
    Playwright driver, chromium and its helpers), stopped by :meth:`stop` on every way out:
    a normal end, an error, a page's time limit (the server is restarted), SIGINT, SIGTERM or
    SIGHUP (:meth:`install`: handlers that stop them and exit), and the interpreter's exit
    (atexit). Chromium is seen as a descendant of this process (:meth:`note`, called after
    each launch and page), so it is stopped even when its driver is gone first."""

    def __init__(self) -> None:
        self.server: Any = None  # the page server's Popen: a session and group of its own
        self.seen: dict[int, int] = {}  # every descendant met: pid → start time
        self.lock = threading.RLock()
        self.stopped = False
        self.folders: list[Path] = []  # removed once everything is stopped

    def note(self) -> None:
        """Remember the processes below this one now."""
        with self.lock:
            self.seen.update(descendants(os.getpid()))

    def stop_server(self, grace: float = 3.0) -> None:
        """SIGTERM to the page server's group, SIGKILL to whatever of it is left after
        ``grace`` seconds (a script run busy in a query does not end on SIGTERM)."""
        import signal
        import subprocess

        proc, self.server = self.server, None
        if proc is None:
            return
        group = descendants(proc.pid)
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in alive(group):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            proc.wait(timeout=10)

    def stop(self) -> None:
        """Stop the page server, then every other process below this one, seen now or before
        (chromium, its driver), then remove :attr:`folders`; idempotent."""
        import shutil
        import signal

        with self.lock:
            self.note()
            server = self.server.pid if self.server is not None else None
            rest = {p: t for p, t in self.seen.items() if p != server}
            self.stop_server()
            for pid in alive(rest):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for folder in self.folders:
                shutil.rmtree(folder, ignore_errors=True)
            self.stopped = True

    def install(self) -> None:
        """Stop everything on SIGINT, SIGTERM, SIGHUP (then exit 128 + the signal) and at exit."""
        import atexit
        import signal

        def handler(signum: int, _frame: Any) -> None:
            name = signal.Signals(signum).name
            print(f"stopped by {name}: stopping the page server and the browser", flush=True)
            self.stop()
            os._exit(128 + signum)

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, handler)
        atexit.register(self.stop)


class Watchdog:
    """The benchmark's last resort: a step (a page's measurement, the server's start) that
    overruns its limit by ``grace`` seconds, stuck where the benchmark's own limits do not
    reach (a browser call that never returns), stops everything and exits 3, naming it."""

    def __init__(self, reaper: Reaper, grace: float = 30.0) -> None:
        self.reaper, self.grace = reaper, grace
        self.what, self.deadline = "", float("inf")
        threading.Thread(target=self._watch, name="bench-watchdog", daemon=True).start()

    def arm(self, what: str, seconds: float) -> None:
        self.what, self.deadline = what, time.monotonic() + seconds + self.grace

    def disarm(self) -> None:
        self.deadline = float("inf")

    def _watch(self) -> None:
        while True:
            time.sleep(0.5)
            if time.monotonic() > self.deadline:
                print(
                    f"TIME LIMIT: {self.what} still running {self.grace:.0f} s past its time"
                    " limit: stopping the benchmark",
                    flush=True,
                )
                self.reaper.stop()
                os._exit(3)


def _server_env_note(serve_log: Path) -> str:
    try:
        tail = serve_log.read_text(errors="replace").strip().splitlines()[-3:]
    except OSError:
        return ""
    return (" (its log: " + " | ".join(tail) + ")") if tail else ""


def drop_page_cache() -> None:
    """Write the dirty pages out and empty the kernel's page cache, dentries and inodes
    (root only; :class:`PermissionError` otherwise)."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def browser_times(
    data: Path,
    runs: int,
    pages: list[str],
    limit: float = 120.0,
    load_limit: float = 300.0,
    cold: bool = False,
) -> int:
    """Each page ``runs`` times in chromium (module docstring), each measurement printed as
    it is made and the medians at the end. ``limit``: seconds a page may take to settle (a
    page over it is named, not measured again, and the server restarted); ``load_limit``:
    the app's first load's; ``cold``: the page cache emptied before the server starts and
    before each page's click (:func:`drop_page_cache`). The server and the browser are stopped on every
    way out (:class:`Reaper`). Returns the exit status: 0, or 1 when a page hit its limit."""
    pages = [p for p in pages if p in BROWSER_PAGES]
    import signal
    import socket
    import subprocess
    import tempfile
    import urllib.request

    reaper = Reaper()
    reaper.install()
    watchdog = Watchdog(reaper)
    work = Path(tempfile.mkdtemp(prefix="perf-pages-"))
    reaper.folders.append(work)
    ack = work / "cleared"
    ran = ack.with_suffix(".ran")
    serve_log = work / "server.log"
    base = ""

    def start_server() -> None:
        nonlocal base
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        with open(serve_log, "ab") as log:
            reaper.server = subprocess.Popen(
                [sys.executable, __file__, str(data), "--serve", str(port), str(ack)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + load_limit
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2):
                    return
            except OSError:
                pass
            if reaper.server.poll() is not None:
                raise RuntimeError("the page server exited" + _server_env_note(serve_log))
            if time.monotonic() > deadline:
                raise PageTimeLimit(f"the page server did not answer in {load_limit:.0f} s")
            time.sleep(0.2)

    def clear_caches() -> None:
        before = ack.read_text() if ack.exists() else ""
        os.kill(reaper.server.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 30
        while (ack.read_text() if ack.exists() else "") == before:
            if time.monotonic() > deadline:
                raise TimeoutError("the dashboard did not empty its caches in 30 s")
            time.sleep(0.02)

    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright

        sys.path.insert(0, str(ROOT / "tests" / "helpers"))
        from dash_helpers import CHROMIUM, CHROMIUM_ARGS, ERRORS

        watchdog.arm("the page server's start", load_limit)
        if cold:
            drop_page_cache()  # the server's start and the first load read the store from disk
        start_server()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            reaper.note()

            def tab(timeout: float) -> Any:
                ctx = browser.new_context(viewport={"width": 1400, "height": 1600})
                pg = ctx.new_page()
                pg.set_default_timeout(timeout * 1000)
                return pg

            def first_load() -> float:
                pg = tab(load_limit)
                try:
                    t = time.time()
                    pg.goto(base)
                    return settled(pg, BROWSER_PAGES["overview"][1], t, ran, timeout=load_limit)
                finally:
                    pg.context.close()

            def click(pg: Any, name: str, still: float = 0.75) -> float:
                label, title, _ = BROWSER_PAGES[name]
                # its label ends the link's text (after the icon's): "Play" is not "Replay"
                link = pg.locator(
                    '[data-testid="stSidebarNavLink"]', has_text=re.compile(re.escape(label) + "$")
                ).first
                if not link.is_visible():  # past the menu's first ten: "View N more" first
                    pg.locator(NAV_MORE, has_text="more").first.click()
                t = time.time()
                link.click()
                return settled(pg, title, t, ran, still=still, timeout=limit)

            def landed(name: str) -> Any:
                """A new tab on the light page the page ``name`` is clicked from, done."""
                land = "overview" if name == "replay" else "replay"
                pg = tab(limit)
                t = time.time()
                pg.goto(f"{base}/{BROWSER_PAGES[land][2]}")
                # the steps before a timed click need the page done, not its time
                settled(pg, BROWSER_PAGES[land][1], t, ran, still=LEAD_STILL, timeout=limit)
                return pg

            def timed(pg: Any, name: str) -> tuple[float, int]:
                """The data caches emptied (and the page cache, ``cold``), the page clicked:
                its time and its error boxes."""
                clear_caches()
                if cold:
                    drop_page_cache()
                took = click(pg, name)
                return took, pg.locator(ERRORS).count()

            watchdog.arm("the first load", load_limit)
            print(f"first load (tab, bundle, catalog, overview): {first_load():.2f} s", flush=True)
            modes = ("new tab", "open tab")
            times: dict[tuple[str, str], list[float]] = {
                (m, name): [] for m in modes for name in pages
            }
            errors = dict.fromkeys(pages, 0)
            over: dict[str, str] = {}  # page → where it hit the time limit
            for k in range(1, runs + 1):
                for name in pages:
                    if name in over:
                        continue
                    # one tab: "new tab" is its first visit of the page, "open tab" the
                    # next, after the light page again (the same document)
                    pg = None
                    for mode in modes:
                        watchdog.arm(f"page {name} ({mode}, run {k})", 4 * limit + 30)
                        try:
                            if pg is None:
                                pg = landed(name)
                            else:
                                click(pg, "overview" if name == "replay" else "replay", LEAD_STILL)
                            took, errs = timed(pg, name)
                        except (PageTimeLimit, PlaywrightError, TimeoutError) as e:
                            over[name] = f"{mode}, run {k}"
                            print(
                                f"TIME LIMIT: page {name} ({mode}, run {k}) not done in"
                                f" {limit:g} s: {str(e).splitlines()[0][:200]}; not measured"
                                " again, the page server restarted",
                                flush=True,
                            )
                            watchdog.arm("the page server's restart", 2 * load_limit)
                            if pg is not None:
                                with contextlib.suppress(PlaywrightError):
                                    pg.context.close()
                                pg = None
                            reaper.stop_server()
                            start_server()
                            first_load()
                            break
                        finally:
                            reaper.note()
                        times[(mode, name)].append(took)
                        errors[name] += errs
                        print(f"  {name:14s} {mode:8s} run {k}: {took:6.2f} s", flush=True)
                    if pg is not None:
                        pg.context.close()
            watchdog.disarm()
            print(
                f"{'page':14s} {'new tab':>8s} {'min':>5s} {'max':>5s}"
                f" {'open tab':>9s} {'min':>5s} {'max':>5s}  errors"
                f"   (seconds; clicked in the menu, caches cold, {runs} runs, medians)"
            )
            for name in pages:
                cols = ""
                for mode in modes:
                    ts = times[(mode, name)]
                    if ts:
                        cols += f" {statistics.median(ts):8.2f} {min(ts):5.2f} {max(ts):5.2f}"
                    else:
                        cols += f" {'-':>8s} {'-':>5s} {'-':>5s}"
                limited = f"  time limit hit ({over[name]})" if name in over else ""
                print(f"{name:14s}{cols}   {errors[name]}{limited}", flush=True)
            browser.close()
            return 1 if over else 0
    finally:
        watchdog.disarm()
        reaper.stop()


if __name__ == "__main__":
    main()
