"""The same hands imported at once into several runs (issue 40, item 1), by live processes:
each hand is stored once in the store, whichever run got it, the others refused as
duplicates. The imports wait on the store's import lock (``DATA/.ingest.lock``) and then the
run's lock; ``PAOHUZI_TEST_IMPORT_PAUSE=0:S`` holds the first writer between its shard's files
and its manifest, where the race was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from catalog_helpers import cli

from replay import store as store_api
from replay.record.importing import import_hands
from replay.replayer import importing, replay_file
from replay.store.manifest import IMPORT_LOCK_NAME, ImportLock, RunBusy
from replay.store.write.run import PAUSE_ENV

#: Seconds any one command of these tests may take (2 shared cores: generous).
COMMAND_SECONDS = 240


def paohuzi(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``paohuzi ARGS`` as a process of its own (started, not waited for)."""
    return subprocess.Popen(
        [sys.executable, "-m", "paohuzi.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=COMMAND_SECONDS)
    return proc.returncode, out, err


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``b30.jsonl``: 30 hands of a simulated run, one JSON replay file per line."""
    d = tmp_path_factory.mktemp("import")
    src = d / "src"
    # in this process: the race is the imports', not the simulation's
    rc, _, err = cli("simulate", "--data", str(src), "--run", "s", "-n", "30", "--seed", "11",
                     "-q", "-w", "1")  # fmt: skip
    assert rc == 0, err
    st = store_api.open_store(src)
    lines = [
        json.dumps(json.loads(replay_file.export_hand(st, "s", i, "json")[0]), ensure_ascii=False)
        for i in range(30)
    ]
    path = d / "b30.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def stored(root: Path) -> dict[bytes, list[tuple[str, int]]]:
    """``deck -> [(run, hand_id), …]`` over every run of the store."""
    out: dict[bytes, list[tuple[str, int]]] = {}
    st = store_api.open_store(root)
    for name in st.run_names():
        r = st.run(name)
        t = r.read_table("hands").select(["hand_id", "deck"]).to_pydict()
        for hid, deck in zip(t["hand_id"], t["deck"], strict=True):
            out.setdefault(bytes(deck), []).append((name, hid))
    return out


def test_same_hands_into_three_runs_bug(tmp_path: Path, batch: Path) -> None:
    # Three `paohuzi import --jsonl b30.jsonl --run x1|x2|x3` at once each accepted 30 of
    # 30: the duplicate check ran under the target run's lock only.
    root = tmp_path / "d"
    env = {PAUSE_ENV: "0:3"}  # the first writer of each run waits before its manifest
    args = ["import", "--data", str(root), "--jsonl", str(batch), "--json"]
    procs = [paohuzi(*args, "--run", f"x{k}", env=env) for k in (1, 2, 3)]
    results = [finish(p) for p in procs]
    answers = []
    for rc, out, err in results:
        assert rc in (0, 1), err
        answers.append(json.loads(out))
    assert sum(a["accepted"] for a in answers) == 30, [a["accepted"] for a in answers]
    refusals = [h["reason"] for a in answers for h in a["hands"] if h["status"] == "refused"]
    assert refusals == ["duplicate"] * 60
    decks = stored(root)
    assert len(decks) == 30 and all(len(where) == 1 for where in decks.values()), decks
    assert (root / IMPORT_LOCK_NAME).is_file()  # the store's own lock file, kept
    rc, out, err = finish(paohuzi("verify", "--data", str(root), "-q"))
    assert rc == 0, out + err


def test_same_hands_posted_into_three_runs_bug(tmp_path: Path, batch: Path) -> None:
    # Three concurrent POST /runs/pK/hands of the same 30 hands each accepted 30.
    pytest.importorskip("fastapi")
    from paohuzi.service.process import Server

    token = "t0ken-for-the-import-lock-tests"
    headers = {"content-type": "application/x-ndjson", "authorization": f"Bearer {token}"}
    body = batch.read_bytes()
    root = tmp_path / "d"
    answers: list[tuple[int, Any]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(3)

    def client(k: int) -> None:
        try:
            start.wait(timeout=60)
            answers.append(server.json("POST", f"/runs/p{k}/hands", body=body, headers=headers))
        except BaseException as e:  # noqa: BLE001 (reported by the test thread)
            errors.append(e)

    with Server(root, env={"PAOHUZI_IMPORT_TOKEN": token, PAUSE_ENV: "0:2"}) as server:
        threads = [threading.Thread(target=client, args=(k,)) for k in (1, 2, 3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=COMMAND_SECONDS)
    assert not errors, errors
    assert [status for status, _ in answers] == [200, 200, 200], answers
    assert sum(a["accepted"] for _, a in answers) == 30
    decks = stored(root)
    assert len(decks) == 30 and all(len(where) == 1 for where in decks.values())


def test_concurrent_imports_into_one_run_stay_exact(tmp_path: Path, batch: Path) -> None:
    """Two imports of disjoint halves into one run at once: 30 hands, ids 0–29, each once."""
    root = tmp_path / "d"
    lines = batch.read_text(encoding="utf-8").splitlines()
    halves = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for path, part in zip(halves, (lines[:15], lines[15:]), strict=True):
        path.write_text("\n".join(part) + "\n", encoding="utf-8")
    procs = [paohuzi("import", "--data", str(root), "--jsonl", str(p), "--run", "one")
             for p in halves]  # fmt: skip
    for rc, _, err in (finish(p) for p in procs):
        assert rc == 0, err
    decks = stored(root)
    assert len(decks) == 30
    assert sorted(hid for where in decks.values() for _, hid in where) == list(range(30))


def test_import_lock_busy_is_run_busy(tmp_path: Path, batch: Path) -> None:
    """An import that cannot have the store's import lock within its wait is refused with
    :class:`RunBusy` (the service's 503), naming the holder; nothing is written."""
    root = tmp_path / "d"
    store_api.ensure_writable(root)
    items = importing.parse_jsonl(batch.read_bytes(), "b30.jsonl", 100, 1 << 20, "")
    with ImportLock(root):
        began = time.monotonic()
        with pytest.raises(
            RunBusy, match=rf"another import \(pid {os.getpid()}\) \(waited 0.2 s\)"
        ):
            import_hands(root, importing.ImportBatch(items), "x", lock_wait=0.2)
        assert time.monotonic() - began >= 0.2
    assert not store_api.run_dir(root, "x").exists()
    res = import_hands(root, importing.ImportBatch(items), "x", lock_wait=0.2)
    assert res.accepted == 30
