"""``paohuzi stats`` names a run's rules by its preset, or by the nearest preset and the
switches that differ (issue 10: a ``--set`` run was labelled by a hex fingerprint)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from paohuzi.cli.main import main


def test_a_set_run_is_labelled_by_its_rules(tmp_path: Path) -> None:
    for run, extra in (("plain", []), ("min10", ["--set", "min_huxi=10"])):
        r = CliRunner().invoke(
            main,
            ["simulate", "--data", str(tmp_path), "--run", run, "-n", "16", "-w", "1", "-q",
             "--engine", "reference", *extra],
        )  # fmt: skip
        assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["stats", "--data", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.stderr
    labels = {s["run"]: s["rules"] for s in json.loads(r.stdout)["runs"]}
    assert labels == {"plain": "hunan", "min10": "hunan min_huxi=10"}
    r = CliRunner().invoke(main, ["stats", "--data", str(tmp_path), "min10"])
    assert "rules hunan min_huxi=10" in r.stdout
