"""A reader's one view of a run while an import commits into it (issue 40, item 2): the
figures, the manifest's counts and the catalog all come from the manifest the scan read and
the files it lists, never from a manifest read later. Files written but not yet listed are
not part of the view; a genuinely damaged run is still named and left out."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from engine.errors import CorruptLog
from replay import store as store_api
from replay.analysis.stats import run_stats
from replay.record.importing import import_hands
from replay.replayer import importing, replay_file
from replay.store.runs import Store

#: Hands per import, imports per test.
BATCH, IMPORTS = 40, 5


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """BATCH × IMPORTS hands of a simulated run, each one JSON replay file on one line."""
    from click.testing import CliRunner

    from paohuzi.cli.main import main

    src = tmp_path_factory.mktemp("torn") / "src"
    args = ["simulate", "--data", str(src), "--run", "s", "-n", str(BATCH * IMPORTS), "-q"]
    res = CliRunner().invoke(main, [*args, "--seed", "21", "-w", "1"])
    assert res.exit_code == 0, res.output
    st = store_api.open_store(src)
    return [
        json.dumps(json.loads(replay_file.export_hand(st, "s", i, "json")[0]), ensure_ascii=False)
        for i in range(BATCH * IMPORTS)
    ]


def import_batch(root: Path, lines: list[str], k: int, run: str = "cc2") -> None:
    """Batch ``k`` of ``lines`` into ``run`` (every hand accepted)."""
    part = lines[k * BATCH : (k + 1) * BATCH]
    items = importing.parse_jsonl("\n".join(part).encode(), "batch", 1000, 1 << 20, "")
    assert import_hands(root, importing.ImportBatch(items), run).accepted == BATCH


def test_stats_of_a_scan_made_before_a_commit_bug(tmp_path: Path, lines: list[str]) -> None:
    # The scan saw 40 hands, the manifest read after it listed 80: 409 "run cc2: the
    # manifest lists 80 hands, the shards hold 40" for a healthy run.
    root = tmp_path / "d"
    import_batch(root, lines, 0)
    st = store_api.open_store(root)
    state = st.scan()
    import_batch(root, lines, 1)  # a commit between the scan and the reading of the run
    (before,) = run_stats(st, ["cc2"], state=state)
    assert before.hands == BATCH  # the scan's view, whole
    (now,) = run_stats(st, ["cc2"])
    assert now.hands == 2 * BATCH


def test_stats_with_a_commit_inside_the_call_bug(
    tmp_path: Path, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same race inside one `paohuzi stats` (no state given): the commit is injected
    # right after the scan, before the run's manifest used to be read again.
    root = tmp_path / "d"
    import_batch(root, lines, 0)
    scan = Store.scan

    def scan_then_commit(self: Store, *a: Any, **k: Any) -> Any:
        state = scan(self, *a, **k)
        import_batch(root, lines, 1)
        return state

    monkeypatch.setattr(Store, "scan", scan_then_commit)
    (st,) = run_stats(store_api.open_store(root), ["cc2"])
    assert st.hands == BATCH


def test_unlisted_files_are_not_part_of_the_view(tmp_path: Path, lines: list[str]) -> None:
    """Shard files present but not listed (an import that has not committed yet) are not
    read: the figures are the manifest's hands."""
    root = tmp_path / "d"
    import_batch(root, lines, 0)
    import_batch(root, lines, 1, run="other")
    run_path = store_api.run_dir(root, "cc2")
    for table in ("hands", "events"):
        src = store_api.run_dir(root, "other") / store_api.shard_file(table, 0)
        (run_path / store_api.shard_file(table, 1)).write_bytes(src.read_bytes())
    (st,) = run_stats(store_api.open_store(root), ["cc2"])
    assert st.hands == BATCH


def test_a_damaged_run_is_still_refused(tmp_path: Path, lines: list[str]) -> None:
    """The checks stay: a damaged shard in the scanned view is named, never counted."""
    root = tmp_path / "d"
    import_batch(root, lines, 0)
    import_batch(root, lines, 1, run="ok")
    f = store_api.run_dir(root, "cc2") / store_api.shard_file("hands", 0)
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x5A
    f.write_bytes(bytes(data))
    st = store_api.open_store(root)
    with pytest.raises(CorruptLog, match="run cc2 is damaged and left out"):
        run_stats(st, ["cc2"])
    skipped: list[str] = []
    assert [r.run for r in run_stats(st, on_skip=skipped.append)] == ["ok"]
    assert skipped and skipped[0].startswith("run cc2 is damaged and left out")


def test_stats_polled_during_live_imports_bug(tmp_path: Path, lines: list[str]) -> None:
    # GET /stats?run=cc2 from three readers during five POSTs into cc2 answered 409 "run
    # cc2: the manifest lists … hands, the shards hold …" (a live `paohuzi serve`).
    pytest.importorskip("fastapi")
    from paohuzi.service.process import Server

    token = "t0ken-for-the-torn-read-tests"
    headers = {"content-type": "application/x-ndjson", "authorization": f"Bearer {token}"}
    root = tmp_path / "d"
    import_batch(root, lines, 0)
    done = threading.Event()
    answers: list[tuple[int, Any]] = []
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(500):  # bounded; stops when the imports are done
                if done.is_set():
                    return
                answers.append(server.json("GET", "/stats?run=cc2"))
        except BaseException as e:  # noqa: BLE001 (reported by the test thread)
            errors.append(e)

    with Server(root, env={"PAOHUZI_IMPORT_TOKEN": token}) as server:
        readers = [threading.Thread(target=reader) for _ in range(3)]
        for t in readers:
            t.start()
        try:
            for k in range(1, IMPORTS):
                body = ("\n".join(lines[k * BATCH : (k + 1) * BATCH]) + "\n").encode()
                status, answer = server.json("POST", "/runs/cc2/hands", body=body, headers=headers)
                assert status == 200 and answer["accepted"] == BATCH, answer
        finally:
            done.set()
            for t in readers:
                t.join(timeout=300)
        status, last = server.json("GET", "/stats?run=cc2")
    assert not errors, errors
    assert answers, "no reader got an answer"
    bad = [(s, a) for s, a in answers if s != 200]
    assert not bad, bad[:3]
    seen = {a["runs"][0]["hands"] for _, a in answers}
    assert seen <= {BATCH * k for k in range(1, IMPORTS + 1)}, seen
    assert status == 200 and last["runs"][0]["hands"] == BATCH * IMPORTS
