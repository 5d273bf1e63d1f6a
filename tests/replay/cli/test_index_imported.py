"""``paohuzi index`` over a store with a run of imported hands: that run gets its facts but
no summary tables (its seats' policies vary from hand to hand), the others are summarised,
and the command exits 0 with one line per run (it raised an IndexError before)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from replay.cli.main import main
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
    assert "run mine: imported hands, no summary tables" in out
    assert "run mine: facts of 1 shard(s) derived" in out
    store = open_store(data)
    assert not any(summary.has_summary(s) for s in store.run("mine").shards)
    assert all("facts" in s["files"] for s in store.run("mine").shards)
    assert all(summary.has_summary(s) for s in store.run("sim").shards)
    _ok(["verify", "--data", str(data)])
