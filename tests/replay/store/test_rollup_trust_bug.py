"""A rollup is checked as a summary is (issue 59, items 2 and 3): a rollup rewritten with
false counts and its checksum updated in the manifest is caught by every reader (its hands
against the shards it sums), the figures then come from the shards' summaries, `verify`
flags it and `index` rebuilds what `verify` flags."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from two_runs import cli, two_runs

from replay.store.files import write_json
from replay.store.layout import MANIFEST_NAME
from replay.store.manifest import read_manifest
from replay.store.rollup import ROLLUP_KEY, rollup_bytes
from replay.store.scan import scan_store


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return two_runs(tmp_path_factory.mktemp("rollup_trust_bug") / "data", 160)


@pytest.fixture
def data(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(pristine, tmp_path / "data", symlinks=True))


def _forge(run: Path, column: str, change: object) -> None:
    """The run's rollup rewritten with ``column`` changed, and its manifest entry's size and
    SHA-256 with it: what passed the readers' checks before."""
    m = read_manifest(run)
    path = run / m[ROLLUP_KEY]["path"]
    t = pq.read_table(path)
    i = t.schema.get_field_index(column)
    t = t.set_column(i, column, change(t.column(column)))  # type: ignore[operator]
    raw = rollup_bytes(t)
    path.write_bytes(raw)
    m[ROLLUP_KEY].update(bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())
    write_json(run / MANIFEST_NAME, m)


def _stats(data: Path, *extra: str, summary: bool = True) -> tuple[dict, str]:
    env = None if summary else {"PAOHUZI_SUMMARY": "0"}
    code, out, err = cli("stats", "--data", str(data), "--json", *extra, env=env)
    assert code == 0, out + err
    return json.loads(out), err


def test_a_forged_rollup_is_not_trusted_bug(data: Path) -> None:
    # Before: `stats` reported 320 hands for run a (160) from a rollup whose every count was
    # doubled, its checksum updated in the manifest; the same forgery of a summary was caught.
    want, _ = _stats(data, summary=False)
    run = data / "runs" / "run=a"
    _forge(run, "n", lambda n: pc.multiply(n, 2))
    info = scan_store(data).run("a")
    assert info is not None and info.rollup_shards == 0
    assert "counts 320 hands, the 5 shards it covers hold 160" in str(info.rollup_problem)
    got, err = _stats(data)
    assert "run a: its rollup is not used" in err
    assert got == want
    assert [r["hands"] for r in got["runs"]] == [160, 160]


def test_index_rebuilds_the_rollup_verify_flags_bug(data: Path) -> None:
    # Before: `verify` said "'paohuzi index' rebuilds it" of a rollup with false wins (right
    # hand counts), and `index` left it as it was, so `verify` failed again.
    want, _ = _stats(data, summary=False)
    run = data / "runs" / "run=a"
    _forge(run, "won", lambda w: pc.add(w, 1))
    code, out, _ = cli("verify", "--data", str(data))
    assert code != 0 and "does not match the summaries it rolls up" in out, out
    code, out, err = cli("index", "--data", str(data), "-q")
    assert code == 0, out + err
    code, out, _ = cli("verify", "--data", str(data))
    assert code == 0, out
    assert _stats(data)[0] == want


def test_a_killed_index_temporary_file_goes_with_the_next_index_bug(data: Path) -> None:
    # Before: the temporary summary a killed `index` left (its writer gone) survived the next
    # complete `index`; only `doctor --fix` or a resumed `simulate` removed it.
    run = data / "runs" / "run=a"
    temp = run / "summary" / ".part-00002.parquet.tmp-999999999"
    temp.write_bytes(b"half a summary")
    code, out, err = cli("index", "--data", str(data), "-q")
    assert code == 0, out + err
    assert not temp.exists()
    code, out, err = cli("doctor", "--data", str(data))
    assert code == 0, out + err
