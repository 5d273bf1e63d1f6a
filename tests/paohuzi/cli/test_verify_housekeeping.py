"""``paohuzi verify`` of a clean run says nothing a user cannot act on (issue 60): an earlier
rollup file kept for readers of an earlier manifest (after ``paohuzi play`` adds a hand, for
ten minutes) is the store's housekeeping, said only with ``-v``; ``--json`` lists it under
``details``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store.layout import run_dir


def test_an_earlier_rollup_is_said_only_with_verbose(tmp_path: Path) -> None:
    data = tmp_path / "d"
    res = CliRunner().invoke(
        main, ["simulate", "--data", str(data), "--run", "r", "-n", "24", "-w", "1", "-q",
               "--shard-hands", "8"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    folder = run_dir(data, "r") / "rollup"
    (listed,) = folder.iterdir()
    shutil.copy(listed, folder / "part-00001.parquet")  # as a run's earlier write leaves it
    res = CliRunner().invoke(main, ["verify", "--data", str(data), "-q"])
    assert res.exit_code == 0, res.output
    assert "Note:" not in res.output and res.stdout.endswith("all good\n"), res.output
    res = CliRunner().invoke(main, ["verify", "--data", str(data), "-q", "-v"])
    assert res.exit_code == 0, res.output
    (note,) = [line for line in res.stdout.splitlines() if line.startswith("Note:")]
    assert note.startswith("Note: run r: rollup/part-00001.parquet is an earlier rollup"), note
    res = CliRunner().invoke(main, ["verify", "--data", str(data), "-q", "--json"])
    (run,) = json.loads(res.stdout)["runs"]
    assert run["notes"] == [] and len(run["details"]) == 1, run
