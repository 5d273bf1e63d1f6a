"""Where imported hands came from: each new shard of a run of imported hands has its own
provenance file (``imported/part-NNNNN.parquet``, listed with its checksum), so an import
adds one shard entry to the manifest and nothing per hand; a run written before, with the
manifest's ``imported`` list, still opens, verifies, takes more hands and says where all
of them came from."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.errors import CorruptLog
from engine.rules import find_rules
from paohuzi.cli.main import main
from replay import store
from replay.record import runner
from replay.record.importing import import_hands
from replay.record.spec import RunSpec
from replay.replayer import importing, replay_file


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[replay_file.ReplayFile]:
    """Hands 0–7 of a simulated run ``src`` as parsed replay files."""
    d = tmp_path_factory.mktemp("provenance")
    spec = RunSpec(rules=find_rules("hunan"), policies=("random",) * 3, seed=5, deals=8)
    runner.simulate(spec, d, "src")
    return [replay_file.read_replay(replay_file.export_hand(d, "src", i)[0], f"h{i}.phz")
            for i in range(8)]  # fmt: skip


def verify(root: Path) -> Any:
    return CliRunner().invoke(main, ["verify", "--data", str(root)])


def origin(i: int, hand_id: int) -> dict[str, Any]:
    return {"hand_id": hand_id, "file": f"h{i}.phz", "title": f"run src hand {i}",
            "from": {"run": "src", "hand_id": i}}  # fmt: skip


def without_at(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    assert all(isinstance(e.pop("at"), str) for e in entries)
    return entries


def test_per_shard_provenance(tmp_path: Path, files: list[replay_file.ReplayFile]) -> None:
    root = tmp_path / "d"
    import_hands(root, importing.ImportBatch(files[:2]), "imp")
    path = store.run_dir(root, "imp")
    before = store.read_manifest(path)
    import_hands(root, importing.ImportBatch(files[2:5]), "imp")
    after = store.read_manifest(path)
    # the manifest gains the shard's entry and new totals, nothing per hand
    assert after["shards"][0] == before["shards"][0] and after["imported"] == []
    changed = {k for k in after if k not in before or after[k] != before[k]}
    assert {"shards", "params", "progress"} <= changed <= {"shards", "params", "progress",
                                                          "updated", "rollup"}  # fmt: skip
    entry = after["shards"][1]["files"]["imported"]
    assert entry["path"] == "imported/part-00001.parquet" and entry["rows"] == 3
    run = store.open_store(root).run("imp")
    assert without_at(importing.provenance(run)) == [origin(i, i) for i in range(5)]
    assert verify(root).exit_code == 0
    raw = (path / entry["path"]).read_bytes()
    (path / entry["path"]).write_bytes(raw[:-9] + bytes(9))  # the same size, not the bytes
    with pytest.raises(CorruptLog, match="imported/part-00001.parquet does not match"):
        importing.provenance(store.open_store(root).run("imp"))
    out = verify(root)
    assert out.exit_code == 1
    assert (
        "shard 1: provenance file imported/part-00001.parquet does not match its SHA-256 in"
        " the manifest"
    ) in out.output, out.output


def test_a_run_with_the_manifest_list(tmp_path: Path, files: list[replay_file.ReplayFile]) -> None:
    """A run written the old way: provenance in the manifest's ``imported`` list (``from``
    as the replay file's ``source``), no provenance files."""
    root = tmp_path / "d"
    import_hands(root, importing.ImportBatch(files[:3]), "imp")
    path = store.run_dir(root, "imp")
    m = store.read_manifest(path)
    m["imported"] = importing.provenance(store.open_store(root).run("imp"))
    for s in m["shards"]:
        del s["files"]["imported"]
    m["progress"]["bytes"] = sum(f["bytes"] for s in m["shards"] for f in s["files"].values())
    store.write_manifest(path, m)
    shutil.rmtree(path / "imported")
    assert verify(root).exit_code == 0, verify(root).output
    res = import_hands(root, importing.ImportBatch(files[3:5]), "imp")
    assert [v.hand_id for v in res.verdicts] == [3, 4]
    res = import_hands(
        root, importing.ImportBatch(files[1:2]), "imp"
    )  # still a duplicate of hand 1
    assert [v.reason for v in res.verdicts] == ["duplicate"]
    assert verify(root).exit_code == 0
    run = store.open_store(root).run("imp")
    assert without_at(importing.provenance(run)) == [origin(i, i) for i in range(5)]
