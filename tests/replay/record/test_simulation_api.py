"""A simulation as a library call (replay.record.simulation, issue 61): ``build_spec`` and
``simulate`` record what ``paohuzi simulate`` with the same options records, the same bytes,
and resume or confirm the same way; bad options raise the library's errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.errors import PaohuziError
from paohuzi.cli.main import main
from replay import store
from replay.record.simulation import build_spec, simulate


def _tables(root: Path, run: str) -> dict[str, bytes]:
    path = store.run_dir(root, run)
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*.parquet"))}


def test_the_library_records_what_the_command_records(tmp_path: Path) -> None:
    options = dict(hands=8, seed=5, policies="learned@hunan,greedy,random", shard_hands=4)
    spec = build_spec(**options, engine="reference", data=tmp_path / "lib")  # type: ignore[arg-type]
    assert spec.engine == "reference" and spec.policies[0] == "learned@hunan"
    assert dict(spec.weights)  # the shipped table, read
    result = simulate(spec, tmp_path / "lib", "same", workers=1)
    assert (result.hands, result.played, result.already_complete) == (8, 8, False)
    assert result.path == store.run_dir(tmp_path / "lib", "same")

    r = CliRunner().invoke(
        main,
        ["simulate", "-n", "8", "--seed", "5", "-p", "learned@hunan,greedy,random",
         "--shard-hands", "4", "--engine", "reference", "-w", "1", "-q",
         "--data", str(tmp_path / "cli"), "--run", "same"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    lib, cli = _tables(tmp_path / "lib", "same"), _tables(tmp_path / "cli", "same")
    assert lib and lib == cli

    again = simulate(spec, tmp_path / "lib", "same")  # complete: confirmed, nothing played
    assert (again.already_complete, again.played, again.hands) == (True, 0, 8)


def test_bad_options_raise_the_librarys_errors(tmp_path: Path) -> None:
    with pytest.raises(PaohuziError, match="2 policies given for 3 seats"):
        build_spec(hands=4, policies="greedy,random")
    with pytest.raises(PaohuziError):
        build_spec(hands=4, rules="no-such-preset")
    with pytest.raises(PaohuziError, match="unknown backend"):
        simulate(build_spec(hands=4, engine="reference"), tmp_path, backend="elsewhere")
