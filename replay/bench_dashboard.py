"""``make bench-dashboard``: the dashboard and ``paohuzi stats`` on a big store, from the
summary tables and from the hands (measured, never asserted in tests).

The store is built honestly but cheaply: one real run of ``--source-hands`` hands is
simulated (``paohuzi simulate``), and its shards are copied under new hand ids and new
manifest entries into a run of ``--hands`` hands (:func:`replay.bench.replicate_run`, as the
seek benchmark does); ``paohuzi index`` then builds its summaries (timed). Then, with the
summaries and without them (``PAOHUZI_SUMMARY=0``): every page server-side through AppTest
with the data caches emptied (``tests/dashboard/perf_pages.py``), and ``paohuzi stats``'
wall time and peak memory; and the summary files' size per million hands.

    .venv/bin/python -m replay.bench_dashboard --hands 10000000 --data /tmp/bench-dash
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) of the child and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    out = subprocess.run(
        args, env={**os.environ, **(env or {})}, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024, out.stdout


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/paohuzi-bench-dashboard")
    ap.add_argument("--hands", type=int, default=10_000_000)
    ap.add_argument("--source-hands", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--policies", default="greedy,random,heuristic")
    ap.add_argument("--runs", type=int, default=1, help="AppTest runs per page")
    a = ap.parse_args(argv)
    from replay.bench import replicate_run
    from replay.store import open_store

    data = Path(a.data)
    cli = [sys.executable, "-c", "from replay.cli.main import main; main()"]
    if not (data / "runs" / "run=src").exists():
        w, _, _ = _run([*cli, "simulate", "--data", str(data), "--run", "src", "-q",
                        "--hands", str(a.source_hands), "--seed", "1", "--policies", a.policies,
                        "--workers", str(a.workers)])  # fmt: skip
        print(f"simulated run src: {a.source_hands:,} hands in {w:.0f} s")
    big = f"big{a.hands}"
    if not (data / "runs" / f"run={big}").exists():
        t = time.perf_counter()
        replicate_run(data, "src", big, a.hands)
        print(f"replicated src into {big}: {a.hands:,} hands in {time.perf_counter() - t:.0f} s")
    w, peak, _ = _run([*cli, "index", "--data", str(data), big])
    print(f"paohuzi index {big}: {w:.1f} s, peak {peak:.0f} MiB")
    run = open_store(data).run(big)
    sbytes = sum(s["files"]["summary"]["bytes"] for s in run.shards)
    srows = sum(s["files"]["summary"]["rows"] for s in run.shards)
    hbytes = sum(s["files"]["hands"]["bytes"] for s in run.shards)
    per_m = 1e6 / run.n_hands
    print(
        f"summary files: {sbytes / 2**20:.1f} MiB, {srows:,} rows for {run.n_hands:,} hands"
        f" ({sbytes * per_m / 2**20:.2f} MiB and {srows * per_m:,.0f} rows per million hands;"
        f" the hands table: {hbytes * per_m / 2**20:.1f} MiB per million)"
    )
    # a store holding only the big run (the source run stays in its own store)
    only = data.parent / (data.name + "-only")
    if not only.exists():
        (only / "runs").mkdir(parents=True)
        os.symlink((data / "runs" / f"run={big}").resolve(), only / "runs" / f"run={big}")
    for label, env in (("summaries", {}), ("raw hands", {"PAOHUZI_SUMMARY": "0"})):
        w, peak, out = _run([*cli, "stats", "--data", str(only), "--json"], env)
        n = json.loads(out)["runs"][0]["hands"]
        print(f"paohuzi stats ({label}): {w:.2f} s wall, peak {peak:.0f} MiB, {n:,} hands")
    for label, env in (("summaries", {}), ("raw hands", {"PAOHUZI_SUMMARY": "0"})):
        print(f"pages ({label}):", flush=True)
        subprocess.run(
            [sys.executable, str(ROOT / "tests/dashboard/perf_pages.py"), str(only),
             "--runs", str(a.runs)],
            env={**os.environ, **env}, check=True,
        )  # fmt: skip


if __name__ == "__main__":
    main()
