"""POST /runs/{run}/hands against a real ``paohuzi serve`` (a subprocess on a free loopback
port, :mod:`paohuzi.service.process`): several clients importing into one run at once, and a
server killed by SIGKILL between writing a shard's files and listing them in the manifest
(the ``PAOHUZI_TEST_IMPORT_PAUSE`` hook holds it there)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from service_helpers import cli

from paohuzi.service.process import Server
from replay import store as store_api
from replay.replayer import replay_file
from replay.store.write.run import PAUSE_ENV

TOKEN = "t0ken-for-the-live-import-tests"
ENV = {"PAOHUZI_IMPORT_TOKEN": TOKEN}
HEADERS = {"content-type": "application/x-ndjson", "authorization": f"Bearer {TOKEN}"}


def post(server: Server, lines: list[str], run: str = "field") -> tuple[int, Any]:
    body = ("\n".join(lines) + "\n").encode("utf-8")
    return server.json("POST", f"/runs/{run}/hands", body=body, headers=HEADERS)


def stored_decks(root: Path, run: str) -> dict[int, bytes]:
    """``hand_id -> deck`` of every hand the run's manifest lists."""
    r = store_api.open_store(root).run(run)
    out: dict[int, bytes] = {}
    for shard in r.shards:
        t = r.read_shard(shard, "hands").select(["hand_id", "deck"]).to_pydict()
        for hid, deck in zip(t["hand_id"], t["deck"], strict=True):
            assert hid not in out, f"hand id {hid} stored twice"
            out[hid] = bytes(deck)
    return out


def deck_of(line: str) -> bytes:
    return bytes(replay_file.read_replay(line).log.deck)


def test_concurrent_clients_into_one_run(tmp_path: Path, replay_lines: list[str]) -> None:
    """4 clients × 3 batches of 3 hands of their own (36 distinct hands) plus, in batch b of
    every client, shared hand 36 + b (sent by all four at about the same time): each hand
    is stored once, under the id its one acceptance names, and the other three are
    refused as duplicates."""
    root = tmp_path / "d"
    clients, batches, own = 4, 3, 3
    shared = {b: replay_lines[clients * batches * own + b] for b in range(batches)}
    answers: list[tuple[list[str], int, Any]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(clients)
    lock = threading.Lock()

    def client(c: int) -> None:
        try:
            start.wait(timeout=60)
            for b in range(batches):
                first = (c * batches + b) * own
                lines = [*replay_lines[first : first + own], shared[b]]
                status, answer = post(server, lines)
                with lock:
                    answers.append((lines, status, answer))
        except BaseException as e:  # noqa: BLE001 (reported by the test thread)
            errors.append(e)

    with Server(root, env=ENV) as server:
        threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not errors, errors
        assert len(answers) == clients * batches
        status, run = server.json("GET", "/runs/field")
    decks = stored_decks(root, "field")
    accepted: dict[int, bytes] = {}
    refusals: list[str | None] = []
    for lines, status, answer in answers:
        assert status == 200, answer
        assert answer["accepted"] + answer["refused"] == len(lines)
        for line, verdict in zip(lines, answer["hands"], strict=True):
            if verdict["status"] == "accepted":
                assert verdict["hand_id"] not in accepted
                accepted[verdict["hand_id"]] = deck_of(line)
            else:
                assert verdict["hand_id"] is None
                refusals.append(verdict["reason"])
    n = clients * batches * own + batches
    assert status == 200 and run["hands"] == n
    assert accepted == decks and sorted(decks) == list(range(n))
    assert len(set(decks.values())) == n  # no hand stored twice
    assert refusals == ["duplicate"] * (clients - 1) * batches
    res = cli("verify", "--data", str(root))
    assert res.exit_code == 0, res.output


def test_a_server_killed_mid_import(tmp_path: Path, replay_lines: list[str]) -> None:
    """Killed after shard 1's files are written and before the manifest lists them: the
    manifest is as before and shard 0's hands verify (the unlisted files noted); the next
    server removes a stale temporary file and accepts the same batch, its unlisted
    files rewritten, and then the whole store verifies."""
    root = tmp_path / "d"
    run_path = store_api.run_dir(root, "field")
    first, second = replay_lines[:3], replay_lines[3:6]
    # the tables, the provenance, the facts and the summary, by name
    tables = ("events", "facts", "hands", "imported", "summary")
    shard1 = [run_path / store_api.shard_file(t, 1) for t in tables]
    with Server(root, env={**ENV, PAUSE_ENV: "1:300"}) as server:
        status, answer = post(server, first)
        assert status == 200 and answer["accepted"] == 3, answer
        listed = (run_path / store_api.MANIFEST_NAME).read_bytes()
        failed: list[BaseException] = []

        def killed_client() -> None:
            try:
                post(server, second)
            except OSError as e:  # the server dies under this request
                failed.append(e)

        t = threading.Thread(target=killed_client)
        t.start()
        while not all(p.exists() for p in shard1) and server.proc.poll() is None:
            t.join(timeout=0.05)
        assert all(p.exists() for p in shard1), server.stderr()
        server.kill()
        t.join(timeout=60)
        assert failed, "the request was answered although the server was killed"
    assert (run_path / store_api.MANIFEST_NAME).read_bytes() == listed
    assert sorted(stored_decks(root, "field")) == [0, 1, 2]
    # the listed hands verify; the files the manifest does not list, in the next shard's
    # slot, are the interrupted import's (noted, not part of the run) until the next import
    res = cli("verify", "--data", str(root))
    assert res.exit_code == 0, res.output
    notes = [line for line in res.stdout.splitlines() if line.startswith("Note:")]
    assert notes == [
        f"Note: run field: {t}/part-00001.parquet is the file of an import interrupted before"
        " the manifest listed it (not part of the run; the next import rewrites it)"
        for t in tables
    ], res.output
    assert "run field: 3 hands," in res.stdout and res.stdout.endswith("all good\n")
    # a file in another slot is no import's: a problem
    odd = run_path / store_api.shard_file("hands", 7)
    odd.write_bytes(shard1[tables.index("hands")].read_bytes())
    res = cli("verify", "--data", str(root))
    assert (
        res.exit_code == 1
        and ("run field: hands/part-00007.parquet is not listed in the manifest of a complete run")
        in res.stdout
    ), res.output
    odd.unlink()
    stale = run_path / "hands" / ".part-00001.parquet.tmp-12345"
    stale.write_bytes(b"left by a writer that died")
    unlisted = shard1[tables.index("hands")].read_bytes()
    inode = shard1[tables.index("hands")].stat().st_ino

    with Server(root, env=ENV) as server:
        status, run = server.json("GET", "/runs/field")
        assert status == 200 and run["hands"] == 3
        status, answer = post(server, second)
        assert status == 200, answer
        assert [h["hand_id"] for h in answer["hands"]] == [3, 4, 5] and answer["shard"] == 1
    assert not stale.exists()
    decks = stored_decks(root, "field")
    assert decks == {i: deck_of(line) for i, line in enumerate(first + second)}
    assert (
        shard1[tables.index("hands")].stat().st_ino != inode
    )  # rewritten (atomically: a new file) …
    assert (
        shard1[tables.index("hands")].read_bytes() == unlisted
    )  # … with the same hands, the same bytes
    res = cli("verify", "--data", str(root))
    assert res.exit_code == 0, res.output
