"""``paohuzi index`` over a store with a run of imported hands: that run has its summary and
facts from the import (tests/replay/store/test_imported_summaries.py), the others are
summarised, and the command exits 0 with its lines per run (it raised an IndexError
before)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store import summary_schema as summary
from replay.store.runs import open_store


def _ok(args: list[str]) -> str:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return r.output


def test_index_with_an_imported_run(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _ok(["simulate", "--data", str(data), "--run", "sim", "-n", "4", "--seed", "3", "-q"])
    hand = tmp_path / "hand.json"
    hand.write_text(_ok(["export", "sim", "1", "--data", str(data)]), encoding="utf-8")
    _ok(["import", str(hand), "--data", str(data), "--run", "mine"])
    out = _ok(["index", "--data", str(data)])
    assert "run mine: 0 shard(s) summarised, 1 already" in out
    assert "run mine: facts of 0 shard(s) derived, 1 already" in out
    store = open_store(data)
    assert all(summary.has_summary(s) for s in store.run("mine").shards)
    assert all("facts" in s["files"] for s in store.run("mine").shards)
    assert all(summary.has_summary(s) for s in store.run("sim").shards)
    _ok(["verify", "--data", str(data)])
