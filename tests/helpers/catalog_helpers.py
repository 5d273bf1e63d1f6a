"""Builders of the store's tests (issue 20: the catalog, the summaries, the manifest reader):
a small simulated store, the ``paohuzi`` command line, a run's figures read straight from its hands
files (an independent source), and a summary file replaced with its manifest entry made to
match."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.derived.summaries import summary_bytes
from replay.store.layout import run_dir

#: OutcomeKind.HUANGZHUANG: a hand nobody won
HUANG = 1


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``paohuzi ARGS``: (exit code, stdout, stderr)."""
    r = CliRunner().invoke(main, list(args), env=env)
    return r.exit_code, r.stdout, r.stderr


def ok_output(args: list[str], env: dict[str, str] | None = None) -> str:
    """The output of a ``paohuzi`` command that must succeed."""
    r = CliRunner().invoke(main, args, env=env)
    assert r.exit_code == 0, r.output
    return r.output


def assert_close(a: Any, b: Any, where: str = "") -> None:
    """Two JSON documents equal, floats to 1e-9 relative (NaN equal to NaN); a difference
    is named by its path (``.key[index]``)."""
    if isinstance(a, dict):
        assert set(a) == set(b), where
        for k in a:
            assert_close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{where}: {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), f"{where}: {a} != {b}"
        else:
            assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def simulate(data: Path, run: str, hands: int, seed: int, shard_hands: int) -> None:
    code, _, err = cli("simulate", "--data", str(data), "--run", run, "--hands", str(hands),
                       "--seed", str(seed), "--shard-hands", str(shard_hands), "-w", "1",
                       "-q")  # fmt: skip
    assert code == 0, err


def stats(data: Path, *runs: str, env: dict[str, str] | None = None) -> tuple[list[Any], str]:
    """``paohuzi stats --json``: (its runs, its stderr); asserts exit 0."""
    code, out, err = cli("stats", "--data", str(data), "--json", *runs, env=env)
    assert code == 0, err
    return json.loads(out)["runs"], err


def on_disk(data: Path, run: str) -> tuple[int, int]:
    """(hands, wins) of a run, read from its hands files alone."""
    t = pq.read_table(run_dir(data, run) / "hands", columns=["outcome"])
    wins = pc.sum(pc.not_equal(t.column("outcome"), HUANG).cast(pa.int64())).as_py()
    return t.num_rows, int(wins or 0)


def figures(run: dict[str, Any]) -> tuple[int, int]:
    """(hands, wins) of one run of ``paohuzi stats --json``."""
    return int(run["hands"]), int(run["outcomes"]["win"]["k"])


def copy_store(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def replace_summary(data: Path, run: str, index: int, table: pa.Table) -> None:
    """Write ``table`` as shard ``index``'s summary file of ``run`` and make its manifest
    entry (bytes, rows, SHA-256) agree, as a careless restore or a forger would."""
    path = run_dir(data, run)
    mpath = path / "manifest.json"
    m = json.loads(mpath.read_text())
    (shard,) = [s for s in m["shards"] if s["index"] == index]
    entry = shard["files"]["summary"]
    body = summary_bytes(table)
    (path / entry["path"]).write_bytes(body)
    entry.update(bytes=len(body), rows=table.num_rows, sha256=hashlib.sha256(body).hexdigest())
    mpath.write_text(json.dumps(m, indent=1))


def summary_of(data: Path, run: str, index: int) -> pa.Table:
    return pq.read_table(run_dir(data, run) / "summary" / f"part-{index:05d}.parquet")


def read_only(path: Path) -> int:
    """Mark ``path`` read-only (``chmod a-w``); its former mode."""
    mode = os.stat(path).st_mode
    os.chmod(path, mode & ~0o222)
    return mode


def catalog_mismatch(data: Path) -> str | None:
    """Why ``DATA/paohuzi.duckdb`` does not answer for the store as it is now, as a reader
    judges it (:func:`replay.store.catalog._mismatch`), or None when it is current."""
    import duckdb

    from replay.store.catalog import _mismatch
    from replay.store.scan import scan_store

    con = duckdb.connect(str(data / "paohuzi.duckdb"), read_only=True)
    try:
        return _mismatch(con, scan_store(data))
    finally:
        con.close()
