"""A damaged run (one of its shard files truncated) and a run whose manifest cannot be read
are named and left out, as by the commands, while the other run still answers."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from service_helpers import cli, cli_json


@pytest.fixture(scope="module")
def damaged(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("damaged") / "store"
    shutil.copytree(store, d)
    shard = d / "runs" / "run=dup" / "hands" / "part-00000.parquet"
    shard.write_bytes(shard.read_bytes()[:-100])
    shutil.copytree(d / "runs" / "run=a", d / "runs" / "run=broken")
    (d / "runs" / "run=broken" / "manifest.json").write_text("{")
    return d


@pytest.fixture(scope="module")
def dclient(damaged: Path) -> Any:
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app

    with TestClient(create_app(damaged), raise_server_exceptions=False) as c:
        yield c


def one_error(r: Any, status: int, damaged: Path, *needles: str) -> None:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert list(body) == ["error"], body
    assert str(damaged) not in r.text and str(damaged.resolve()) not in r.text
    for n in needles:
        assert n in body["error"], body["error"]


def test_runs_name_the_damaged_run(dclient: Any, damaged: Path) -> None:
    rows = {r["run"]: r for r in dclient.get("/runs").json()}
    assert rows["a"]["damaged"] is False and rows["a"]["problem"] is None
    assert rows["dup"]["damaged"] is True
    assert rows["dup"]["problem"].startswith("run dup: shard file hands/part-00000.parquet has")
    one = dclient.get("/runs/dup").json()
    assert one["damaged"] is True and one["problem"] == rows["dup"]["problem"]
    assert one["hand_ranges"] == [[0, 23]]
    broken = rows["broken"]
    assert (broken["status"], broken["damaged"], broken["hands"]) == ("unreadable", True, None)
    assert broken["error"] and broken["problem"] and str(damaged) not in broken["error"]
    one = dclient.get("/runs/broken").json()
    assert (one["status"], one["damaged"], one["hand_ranges"]) == ("unreadable", True, [])


def test_stats_leave_it_out_with_a_warning(dclient: Any, damaged: Path) -> None:
    got = dclient.get("/stats").json()
    res = cli("stats", "--data", str(damaged), "--json")
    assert res.exit_code == 0, res.output
    assert [r["run"] for r in got["runs"]] == ["a"]
    assert got["runs"] == cli_json("stats", "--data", str(damaged), "--json")["runs"]
    # the command's lines, the store's root written DATA
    root = str(damaged.resolve())
    warnings = [
        ln.removeprefix("Warning: ").replace(root, "DATA") for ln in res.stderr.splitlines()
    ]
    assert got["warnings"] == warnings
    assert len(warnings) == 2
    assert warnings[0].startswith("run broken is damaged and left out: ")
    assert warnings[1].startswith("run dup is damaged and left out: ")
    one_error(dclient.get("/stats?run=dup"), 409, damaged, "run dup is damaged and left out")
    assert [r["run"] for r in dclient.get("/stats?run=a").json()["runs"]] == ["a"]


def test_its_hands_are_refused_the_others_answer(dclient: Any, damaged: Path) -> None:
    for url, needle in (
        ("/runs/broken/hands", "unreadable manifest DATA/runs/run=broken/manifest.json"),
        ("/runs/broken/hands/3", "unreadable manifest DATA/runs/run=broken/manifest.json"),
        ("/stats?run=broken", "unreadable manifest DATA/runs/run=broken/manifest.json"),
        ("/runs/dup/hands", "run dup is damaged and left out: run dup: shard file hands/"),
        ("/runs/dup/hands.ndjson", "run dup is damaged and left out"),
        ("/runs/dup/hands/3", "run dup: shard file hands/part-00000.parquet"),
        ("/runs/dup/hands/3/state", "run dup: shard file hands/part-00000.parquet"),
    ):
        one_error(dclient.get(url), 409, damaged, needle)
    assert len(dclient.get("/runs/a/hands").json()["hands"]) == 40
    assert len(dclient.get("/runs/a/hands.ndjson").text.splitlines()) == 40
    assert dclient.get("/runs/a/hands/3").status_code == 200
    assert dclient.get("/runs/a/hands/3/state?step=4&seat=0").status_code == 200


def test_a_query_stopped_by_a_limit_is_one_line_naming_the_variable(store: Path) -> None:
    """A DuckDB error escaping a route (here raised by a route added for the test) is a 500
    with DuckDB's first line; a limit's names the variable that raises it."""
    import duckdb
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app

    app = create_app(store)

    def stopped() -> None:
        raise duckdb.OutOfMemoryException(
            "Out of Memory Error: could not allocate block of size 256.0 KiB (3.9 GiB/4.0 GiB"
            " used)\n\nPossible solutions:\n* Increasing the memory limit"
        )

    app.add_api_route("/v1/stopped", stopped)
    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/v1/stopped")
    assert r.status_code == 500, r.text
    message = r.json()["error"]
    assert message.startswith("cannot read the store: Out of Memory Error: could not allocate")
    assert "Possible solutions" not in message and "\n" not in message
    assert "(over PAOHUZI_DUCKDB_MEMORY, " in message
