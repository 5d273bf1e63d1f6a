"""A small store of two simulated runs, ``a`` (seed 1) and ``b`` (seed 2), each of ``hands``
hands in shards of 32 (so each has a rollup), and the CLI called in this process: what the
tests that forge one run's files and hold the other to its figures share."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``paohuzi ARGS`` in this process: (exit code, stdout, stderr)."""
    from paohuzi.cli.main import main

    r = CliRunner().invoke(main, list(args), env=env)
    return r.exit_code, r.stdout, r.stderr


def two_runs(data: Path, hands: int) -> Path:
    """Simulate runs ``a`` and ``b`` of ``hands`` hands into the store ``data``."""
    for run, seed in (("a", 1), ("b", 2)):
        code, out, err = cli("simulate", "--data", str(data), "--run", run, "-n", str(hands),
                             "--seed", str(seed), "-w", "1", "-q", "--shard-hands", "32")  # fmt: skip
        assert code == 0, out + err
    return data
