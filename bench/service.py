"""``make bench-service``: ``paohuzi serve`` under load — N concurrent clients on loopback
against a real server subprocess (:class:`paohuzi.service.process.Server`), measured, never
asserted in tests.

The store, under ``--data DIR`` (reused when complete, as ``make bench-dashboard`` does):

* ``DIR/src``: run ``src`` of ``--source-hands`` simulated hands;
* ``DIR/bigN``: run ``bigN`` of ``--hands`` (N) hands, copies of ``src``'s shards under new
  ids (:func:`bench.dashboard.replicate_parallel`), then ``paohuzi index`` (its summaries:
  the fast path of ``/stats``);
* ``DIR/import``: made afresh each time: the run of imported hands the import phase writes.

Phases, each bounded by ``--requests`` requests and ``--seconds`` seconds (whichever comes
first; a request under way at the deadline is finished and counted), ``--clients`` threads
each on its own keep-alive connection:

* ``stats``: ``GET /stats?run=bigN`` (summaries; after the first, the answer kept for the
  store's generation);
* ``304``: the same request with ``If-None-Match`` and the ETag of that answer (a client
  revalidating what it holds): 304 Not Modified;
* ``page``: ``GET /runs/bigN/hands?limit=100&cursor=K``, K spread over the run;
* ``export``: ``GET /runs/bigN/hands.ndjson?max=M`` (``--export-hands``, 100,000), read to
  the end: hands/s and MB/s besides requests/s (at most ``--export-requests`` requests);
* ``import``: ``POST /runs/bench/hands`` batches of ``--batch`` JSON replay files exported
  from ``src`` (distinct hands, ``--import-hands`` in all, after a batch of warm-up) into
  the fresh store: hands/s accepted, each verified by the compiled engine, under the run's
  lock.

Every phase starts with one request not counted (a server's first request loads code).

Printed as a table (requests/s, p50/p99 latency); ``--json FILE`` writes the figures.

    .venv/bin/python -m bench.service --hands 10000000
    .venv/bin/python -m bench.service --hands 200 --source-hands 200 --seconds 1 --clients 2
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.dashboard import CLI, replicate_parallel

#: The import token of the benchmark's servers.
TOKEN = "bench-service-import-token"

#: A request: method, path, body, headers.
Request = tuple[str, str, bytes | None, dict[str, str]]


@dataclass
class Phase:
    """One phase's figures: requests answered (``errors``: not 200), wall seconds, latency
    percentiles in milliseconds, body bytes read, and the phase's own unit count (hands
    exported or accepted; 0 where it has none)."""

    name: str
    clients: int
    requests: int
    errors: int
    seconds: float
    p50_ms: float
    p99_ms: float
    bytes: int
    units: int = 0
    #: the answers other than 200, by status (0: the connection failed)
    statuses: dict[int, int] = field(default_factory=dict)

    @property
    def per_second(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["requests_per_s"] = self.per_second
        if self.units:
            d["units_per_s"] = self.units / self.seconds if self.seconds else 0.0
        d["mb_per_s"] = self.bytes / 1e6 / self.seconds if self.seconds else 0.0
        return d


def percentile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile (0…1) of sorted values, nearest rank; 0 for none.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5), percentile([1.0, 2.0, 3.0, 4.0], 0.99)
    (2.0, 4.0)
    """
    if not sorted_values:
        return 0.0
    k = math.ceil(q * len(sorted_values)) - 1
    return sorted_values[max(0, min(len(sorted_values) - 1, k))]


def load(
    name: str,
    port: int,
    make: Callable[[int], Request],
    clients: int,
    max_requests: int,
    max_seconds: float,
    units: Callable[[int, bytes], int] | None = None,
    ok: int = 200,
) -> Phase:
    """``clients`` threads sending ``make(k)`` for k = 0, 1, … until ``max_requests`` are
    sent or ``max_seconds`` have passed, after one request ``make(-1)`` not counted;
    ``units(status, body)`` counts a phase's unit; ``ok``: the expected status (an answer of
    any other is an error)."""
    status, _ = _once(port, make(-1))  # the warm-up: the server's first request loads code
    if status not in (ok, 0):
        print(f"  {name}: the warm-up request answered {status}")
    tickets = itertools.count()
    lock = threading.Lock()
    latencies: list[float] = []
    tally = {"errors": 0, "bytes": 0, "units": 0}
    statuses: dict[int, int] = {}
    deadline = time.perf_counter() + max_seconds

    def client() -> None:
        con = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        try:
            while time.perf_counter() < deadline:
                with lock:
                    k = next(tickets)
                if k >= max_requests:
                    return
                method, path, body, headers = make(k)
                t = time.perf_counter()
                try:
                    con.request(method, path, body=body, headers=headers)
                    r = con.getresponse()
                    data = r.read()
                    status = r.status
                except (OSError, http.client.HTTPException):
                    con.close()
                    con = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
                    status, data = 0, b""
                took = time.perf_counter() - t
                n = units(status, data) if units is not None and status == ok else 0
                with lock:
                    latencies.append(took)
                    tally["errors"] += status != ok
                    tally["bytes"] += len(data)
                    tally["units"] += n
                    if status != ok:
                        statuses[status] = statuses.get(status, 0) + 1
        finally:
            con.close()

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = sorted(latencies)
    return Phase(name, clients, len(lat), tally["errors"], wall, 1e3 * percentile(lat, 0.5),
                 1e3 * percentile(lat, 0.99), tally["bytes"], tally["units"], statuses)  # fmt: skip


def _once(port: int, req: Request) -> tuple[int, bytes]:
    status, body, _ = _once_with_headers(port, req)
    return status, body


def _once_with_headers(port: int, req: Request) -> tuple[int, bytes, dict[str, str]]:
    method, path, body, headers = req
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        con.request(method, path, body=body, headers=headers)
        r = con.getresponse()
        return r.status, r.read(), {k.lower(): v for k, v in r.getheaders()}
    finally:
        con.close()


def build_store(data: Path, hands: int, source_hands: int, workers: int) -> tuple[Path, str]:
    """The store of run ``bigN`` (``hands`` hands, indexed) and its run name; ``DIR/src``
    simulated first if it is not there."""
    from replay import store

    src_root = data / "src"
    src_path = store.run_dir(src_root, "src")
    if not (src_path / store.MANIFEST_NAME).exists():
        t = time.perf_counter()
        subprocess.run([*CLI, "simulate", "--data", str(src_root), "--run", "src", "-q",
                        "--hands", str(source_hands), "--seed", "1", "--workers", str(workers),
                        "--policies", "greedy,random,heuristic"], check=True)  # fmt: skip
        print(f"simulated run src: {source_hands:,} hands in {time.perf_counter() - t:.0f} s")
    big = f"big{hands}"
    t = time.perf_counter()
    shards, written = replicate_parallel(src_root, "src", data / big, big, hands, workers)
    if shards:
        w = time.perf_counter() - t
        print(f"replicated src into {big}: {written:,} hands in {w:.0f} s")
    t = time.perf_counter()
    subprocess.run([*CLI, "index", "--data", str(data / big), big], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    print(f"paohuzi index {big}: {time.perf_counter() - t:.1f} s")
    return data / big, big


def replay_batches(src_root: Path, n: int, batch: int) -> list[bytes]:
    """The first ``n`` hands of run ``src`` as JSON replay files, ``batch`` per JSON-lines
    body."""
    from replay.replayer import replay_file
    from replay.store import open_store

    st = open_store(src_root)
    n = min(n, st.run("src").n_hands)
    lines = [
        json.dumps(json.loads(replay_file.export_hand(st, "src", i, "json")[0]), ensure_ascii=False)
        for i in range(n)
    ]
    return [("\n".join(lines[i : i + batch]) + "\n").encode("utf-8") for i in range(0, n, batch)]


def run_phases(a: argparse.Namespace) -> list[Phase]:
    """Build (or reuse) the stores, then run every phase against a server each."""
    from paohuzi.service.process import Server

    data = Path(a.data)
    big_root, big = build_store(data, a.hands, a.source_hands, a.workers)
    phases: list[Phase] = []
    bound = {"clients": a.clients, "max_seconds": a.seconds}
    export = min(a.export_hands, a.hands)

    def accepted(_status: int, body: bytes) -> int:
        return int(json.loads(body)["accepted"])

    def lines(_status: int, body: bytes) -> int:
        return body.count(b"\n")

    with Server(big_root) as s:
        get: dict[str, str] = {}
        phases.append(
            load(
                "stats",
                s.port,
                lambda k: ("GET", f"/stats?run={big}", None, get),
                max_requests=a.requests,
                **bound,
            )  # fmt: skip
        )
        # a client revalidating the answer it holds: If-None-Match with its ETag -> 304
        _, _, got = _once_with_headers(s.port, ("GET", f"/stats?run={big}", None, get))
        held = {"if-none-match": got.get("etag", '"none"')}
        phases.append(
            load(
                "304",
                s.port,
                lambda k: ("GET", f"/stats?run={big}", None, held),
                max_requests=a.requests,
                ok=304,
                **bound,
            )  # fmt: skip
        )
        step = max(1, a.hands // 997)  # cursors spread over the run, shard after shard
        phases.append(
            load(
                "page",
                s.port,
                lambda k: (
                    "GET",
                    f"/runs/{big}/hands?limit=100&cursor={(k * step) % a.hands}",
                    None,
                    get,
                ),
                max_requests=a.requests,
                **bound,
            )  # fmt: skip
        )
        phases.append(
            load(
                "export",
                s.port,
                lambda k: ("GET", f"/runs/{big}/hands.ndjson?max={export}", None, get),
                max_requests=a.export_requests,
                units=lines,
                **bound,
            )  # fmt: skip
        )
    bodies = replay_batches(data / "src", a.import_hands + a.batch, a.batch)  # 1st: warm-up
    import_root = data / "import"
    shutil.rmtree(import_root, ignore_errors=True)
    headers = {"content-type": "application/x-ndjson", "authorization": f"Bearer {TOKEN}"}
    with Server(import_root, env={"PAOHUZI_IMPORT_TOKEN": TOKEN}) as s:
        phases.append(
            load(
                "import",
                s.port,
                lambda k: ("POST", "/runs/bench/hands", bodies[k + 1], headers),
                max_requests=len(bodies) - 1,
                units=accepted,
                **bound,
            )  # fmt: skip
        )
    return phases


def table(phases: list[Phase]) -> str:
    """The figures, one line per phase."""
    head = (f"{'phase':<8} {'clients':>7} {'requests':>8} {'errors':>6} {'seconds':>8}"
            f" {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}  per second")  # fmt: skip
    out = [head]
    for p in phases:
        extra = ""
        if p.name == "export":
            extra = f"{p.units / p.seconds:,.0f} hands/s, {p.bytes / 1e6 / p.seconds:,.1f} MB/s"
        elif p.name == "import":
            extra = f"{p.units / p.seconds:,.0f} hands/s accepted (verified)"
        if p.statuses:
            extra += " errors: " + ", ".join(f"{k}×{v}" for k, v in sorted(p.statuses.items()))
        out.append(
            f"{p.name:<8} {p.clients:>7} {p.requests:>8,} {p.errors:>6,} {p.seconds:>8.1f}"
            f" {p.per_second:>8.1f} {p.p50_ms:>8.1f} {p.p99_ms:>8.1f}  {extra}"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> list[Phase]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="/tmp/paohuzi-bench-service", help="benchmark folder")
    ap.add_argument("--hands", type=int, default=10_000_000, help="hands of the /stats run")
    ap.add_argument("--source-hands", type=int, default=100_000, help="simulated hands")
    ap.add_argument("--workers", type=int, default=2, help="simulate and replication processes")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients")
    ap.add_argument("--requests", type=int, default=2000, help="most requests per phase")
    ap.add_argument("--seconds", type=float, default=30.0, help="most seconds per phase")
    ap.add_argument("--export-hands", type=int, default=100_000, help="hands per export")
    ap.add_argument("--export-requests", type=int, default=16, help="most exports")
    ap.add_argument("--import-hands", type=int, default=2000, help="hands imported")
    # its former name, still read (not shown)
    ap.add_argument("--ingest-hands", type=int, dest="import_hands", help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, default=50, help="replay files per import request")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    a = ap.parse_args(argv)
    for name in ("hands", "source_hands", "clients", "requests", "export_hands", "batch"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    print(
        f"bench-service: {a.hands:,} hands, {a.clients} clients, at most {a.requests:,}"
        f" requests and {a.seconds:g} s per phase; {os.cpu_count()} cores,"
        f" load {os.getloadavg()[0]:.1f}"
    )
    phases = run_phases(a)
    print(table(phases))
    if a.json is not None:
        doc = {"hands": a.hands, "clients": a.clients, "phases": [p.to_dict() for p in phases]}
        a.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return phases


if __name__ == "__main__":
    main()
