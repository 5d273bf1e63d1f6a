"""One run's forged file never takes the store's other runs down (issue 59, risks): a file a
manifest lists, replaced with columns of its own (an extra one, one of another type) and
its size, rows and SHA-256 put in the manifest, passed every check, and the catalog's one
relation over every run's files then failed for the whole store. The scan holds each file's
columns (its footer's schema) to its table's: a shard file that differs leaves its run out,
a summary or rollup file that differs is not used, the other runs answer."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from two_runs import cli, two_runs

from replay.store.files import write_json
from replay.store.layout import MANIFEST_NAME
from replay.store.manifest import read_manifest
from replay.store.rollup import ROLLUP_KEY


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return two_runs(tmp_path_factory.mktemp("forged_columns_bug") / "data", 96)


@pytest.fixture
def data(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(pristine, tmp_path / "data", symlinks=True))


def _forge(run: Path, entry: dict, change: object) -> None:
    """The file of ``entry`` rewritten by ``change`` (a table → table), its entry's size,
    rows and SHA-256 updated, the manifest written as it is (no rollup refreshed)."""
    path = run / entry["path"]
    t = change(pq.read_table(path))  # type: ignore[operator]
    pq.write_table(t, path, compression="zstd")
    raw = path.read_bytes()
    entry.update(bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest(), rows=t.num_rows)


def _extra(t: pa.Table) -> pa.Table:
    return t.append_column("extra", pa.array([1] * t.num_rows, pa.int64()))


def _retyped(t: pa.Table) -> pa.Table:
    i = t.schema.get_field_index("huxi")
    return t.set_column(i, "huxi", t.column("huxi").cast(pa.string()))


def _stats(data: Path, summary: bool) -> tuple[int, dict | None, str]:
    env = None if summary else {"PAOHUZI_SUMMARY": "0"}
    code, out, err = cli("stats", "--data", str(data), "--json", env=env)
    return code, json.loads(out) if code == 0 else None, out + err


@pytest.mark.parametrize("what", ["summary-extra", "rollup-extra", "hands-retyped", "hands-extra"])
@pytest.mark.parametrize("summary", [True, False], ids=["summaries", "hands"])
def test_a_forged_file_leaves_the_other_runs_usable_bug(
    data: Path, what: str, summary: bool
) -> None:
    # Before: `stats` failed for the whole store ("cannot read the store …: Binder Error" /
    # "Conversion Error"), with the summaries and with PAOHUZI_SUMMARY=0.
    run = data / "runs" / "run=a"
    m = read_manifest(run)
    if what == "summary-extra":
        _forge(run, m["shards"][1]["files"]["summary"], _extra)
    elif what == "rollup-extra":
        _forge(run, m[ROLLUP_KEY], _extra)
    else:
        _forge(run, m["shards"][1]["files"]["hands"], _retyped if "retyped" in what else _extra)
    write_json(run / MANIFEST_NAME, m)
    code, got, text = _stats(data, summary)
    assert code == 0, text
    assert got is not None
    hands = {r["run"]: r["hands"] for r in got["runs"]}
    if what.startswith("hands"):  # the run's data: the run is left out, named
        assert hands == {"b": 96}, hands
        assert "run a is damaged and left out" in text and "column" in text, text
    else:  # derived data: not used, the run's figures from what is sound
        assert hands == {"a": 96, "b": 96}, hands


def test_summaries_deleted_while_serving_leave_other_runs(data: Path) -> None:
    # The break test saw one run's summary files deleted under a running `paohuzi serve`
    # give 500 for the other runs' /stats; not reproduced here (it passes before and after).
    pytest.importorskip("fastapi")
    from paohuzi.service.process import Server

    with Server(data) as server:
        assert server.json("GET", "/stats?run=b")[0] == 200
        run = data / "runs" / "run=a"
        for f in [*(run / "summary").iterdir(), *(run / "rollup").iterdir()]:
            f.unlink()
        for path in ("/stats?run=b", "/stats", "/stats?run=b", "/stats?run=a") * 5:
            status, body = server.json("GET", path)
            assert status == 200, (path, status, body)
        assert {r["run"]: r["hands"] for r in body["runs"]} == {"a": 96}
