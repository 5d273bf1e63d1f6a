"""Live writers and readers (issue 59, item 1): while a run is simulated, interrupted,
resumed, another run imported into and the store indexed, readers poll the service's
``/stats`` (the store, the run written and another run), a hand list, and the CLI's
``paohuzi stats``. Every answer is 200 / exit 0, and each is the figures of a prefix of the
committed shards: its hands a multiple of the shard size, its wins and 荒庄 those SQL counts
over the hands of that prefix.

Before the grace period (docs/LOG_FORMAT.md §14) a reader failed now and then with "No
files found that match the pattern .../rollup/part-000NN.parquet", also for a run nobody
was writing (5 of 420 polls in the break test).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest
from sizes import size

from replay import store as store_api
from replay.replayer import replay_file
from replay.store.files import write_json
from replay.store.layout import MANIFEST_NAME
from replay.store.manifest import read_manifest
from replay.store.rollup import ROLLUP_KEY

pytest.importorskip("fastapi")

SHARD = 16
HANDS = size(960, 2400)
#: reader polls at most, each thread (bounded; they stop when the writers are done)
POLLS = size(3000, 20000)
TOKEN = "t0ken-for-the-live-reader-tests"
PATHS = ("/stats", "/stats?run=base", "/stats?run=live", "/runs/live/hands?limit=3")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "paohuzi.cli", *args]


def _simulate(root: Path, run: str, n: int) -> list[str]:
    return _cli("simulate", "--data", str(root), "--run", run, "-n", str(n), "--shard-hands",
                str(SHARD), "-w", "1", "-q", "--engine", "reference", "--seed", "3")  # fmt: skip


def _shards(root: Path, run: str) -> int:
    try:
        return len(read_manifest(store_api.run_dir(root, run)).get("shards", []))
    except Exception:  # noqa: BLE001 (not there yet)
        return 0


def test_readers_never_fail_while_runs_are_written_bug(tmp_path: Path) -> None:
    from paohuzi.service.process import Server

    root = tmp_path / "d"
    r = subprocess.run(_simulate(root, "base", 64), capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    st = store_api.open_store(root)
    lines = [
        json.dumps(json.loads(replay_file.export_hand(st, "base", i, "json")[0])) for i in range(60)
    ]
    done, live_there = threading.Event(), threading.Event()
    answers: list[tuple[str, int, Any]] = []
    cli: list[tuple[int, str, str]] = []
    errors: list[BaseException] = []

    def reader(server: Server, k: int) -> None:
        try:
            for i in range(POLLS):
                if done.is_set():
                    return
                path = PATHS[(i + k) % (len(PATHS) if live_there.is_set() else 2)]
                status, body = server.json("GET", path)
                answers.append((path, status, body))
        except BaseException as e:  # noqa: BLE001 (reported by the test thread)
            errors.append(e)

    def cli_reader() -> None:
        for _ in range(200):  # bounded
            if done.is_set():
                return
            p = subprocess.run(_cli("stats", "--data", str(root), "--json"), capture_output=True,
                               text=True, check=False, timeout=300)  # fmt: skip
            cli.append((p.returncode, p.stdout, p.stderr))

    headers = {"content-type": "application/x-ndjson", "authorization": f"Bearer {TOKEN}"}
    with Server(root, env={"PAOHUZI_IMPORT_TOKEN": TOKEN}) as server:
        threads = [threading.Thread(target=reader, args=(server, k)) for k in range(3)]
        threads.append(threading.Thread(target=cli_reader))
        for t in threads:
            t.start()
        try:
            # simulate, interrupted once a few rollups are written, then resumed
            w = subprocess.Popen(_simulate(root, "live", HANDS), stderr=subprocess.PIPE)
            deadline = time.monotonic() + 600
            while _shards(root, "live") == 0 and w.poll() is None:
                assert time.monotonic() < deadline, "the simulation did not get going"
                time.sleep(0.01)
            live_there.set()  # from its first manifest on, the run is asked for by name too
            while _shards(root, "live") < HANDS // SHARD // 3 and w.poll() is None:
                assert time.monotonic() < deadline, "the simulation did not get going"
                time.sleep(0.05)
            w.send_signal(signal.SIGINT)
            w.wait(timeout=300)
            r = subprocess.run(_simulate(root, "live", HANDS), capture_output=True, text=True,
                               check=False)  # fmt: skip
            assert r.returncode == 0, r.stderr
            # imports into another run
            for k in range(3):
                body = ("\n".join(lines[k * 20 : (k + 1) * 20]) + "\n").encode()
                status, answer = server.json("POST", "/runs/imp/hands", body=body, headers=headers)
                assert status == 200 and answer["accepted"] == 20, answer
            # index, rebuilding the rollup of the run just written
            run = store_api.run_dir(root, "live")
            m = read_manifest(run)
            m.pop(ROLLUP_KEY)
            write_json(run / MANIFEST_NAME, m)
            r = subprocess.run(_cli("index", "--data", str(root), "-q"), capture_output=True,
                               text=True, check=False)  # fmt: skip
            assert r.returncode == 0, r.stderr
            time.sleep(0.5)  # a few polls of the indexed store
        finally:
            done.set()
            for t in threads:
                t.join(timeout=600)
    assert not errors, errors
    bad = [(p, s, a) for p, s, a in answers if s != 200]
    assert not bad, bad[:3]
    assert [c for c in cli if c[0] != 0] == []
    assert read_manifest(store_api.run_dir(root, "live"))[ROLLUP_KEY]["shards"] == HANDS // SHARD

    # every answer is the figures of a prefix of the committed shards
    con = duckdb.connect()
    live = str(store_api.run_dir(root, "live") / "hands" / "*.parquet")
    expect: dict[int, tuple[int, int]] = {}

    def prefix(n: int) -> tuple[int, int]:
        if n not in expect:
            expect[n] = con.execute(
                "SELECT count(winner), count(*) FILTER (WHERE outcome = 1)"
                f" FROM read_parquet('{live}') WHERE hand_id < ?",
                [n],
            ).fetchone()  # type: ignore[assignment]
        return expect[n]

    def check_run(doc: dict[str, Any]) -> None:
        n = doc["hands"]
        if doc["run"] == "live":
            assert n % SHARD == 0 and 0 <= n <= HANDS, n  # 0: its first manifest
            if n:
                got = (doc["outcomes"]["win"]["k"], doc["outcomes"]["huangzhuang"]["k"])
                assert got == prefix(n), (n, got)
        elif doc["run"] == "base":
            assert n == 64

    polls = {p: 0 for p in PATHS}
    for path, _, body in answers:
        polls[path] += 1
        if path.startswith("/stats"):
            for doc in body["runs"]:
                check_run(doc)
        else:
            ids = [h["hand_id"] for h in body["hands"]]
            assert ids == list(range(len(ids))), ids
    for _, out, _ in cli:
        for doc in json.loads(out)["runs"]:
            check_run(doc)
    print(f"polls {polls}, CLI calls {len(cli)}, errors 0; prefixes seen {len(expect)}")
    assert sum(polls.values()) >= 100 and len(expect) >= 2, (polls, sorted(expect))
