"""Render time of every dashboard page on a store (not a test; run it by hand).

    .venv/bin/python tests/dashboard/perf_pages.py DATA_DIR [--runs 3]

Each page is run through Streamlit's AppTest in this process (the script, its queries and
the element tree; no browser). Reported per page: ``cold`` = the data caches emptied first
(``st.cache_data.clear()``), the DuckDB catalog kept, i.e. the first visit of that page on a
running dashboard; ``warm`` = the same page again. The catalog build (once per server and
store change) is timed on its own. The browser test shows the same order of magnitude plus
the websocket and drawing.
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
    "overview": "pages/overview.py",
    "win_rates": "pages/win_rates.py",
    "huxi": "pages/huxi.py",
    "huangzhuang": "pages/huangzhuang.py",
    "mingtang": "pages/mingtang.py",
    "compare": "pages/compare.py",
    "replay": "pages/replay.py",
    "drilldown": "pages/drilldown.py",
    "drilldown_popao": "pages/drilldown.py?cond=popao",
    "sql": "pages/sql.py",
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    os.environ["PAOHUZI_DATA"] = str(Path(args.data).resolve())

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from dashboard.catalog import open_catalog
    from dashboard.services.store import scan_store

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


if __name__ == "__main__":
    main()
