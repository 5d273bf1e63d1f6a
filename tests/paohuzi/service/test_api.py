"""The API says what the commands say: /runs = ``paohuzi runs --json``, /runs/R/hands (every
page, every filter) and the ndjson export = ``paohuzi hands --json``, a hand = ``paohuzi
export``, its state = ``paohuzi replay --format json``, /stats = ``paohuzi stats --json``;
unknown runs and hands are 404, bad values 400/422, every error one JSON line without the
store's path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from service_helpers import cli, cli_json

from paohuzi.service import models


def get(client: Any, url: str, status: int = 200, params: dict[str, Any] | None = None) -> Any:
    r = client.get(url, params=params)
    assert r.status_code == status, (url, r.status_code, r.text[:500])
    return r


def error_of(client: Any, url: str, status: int, store: Path, *needles: str) -> str:
    r = get(client, url, status)
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert list(body) == ["error"] and "\n" not in body["error"], body
    assert str(store) not in r.text and str(store.resolve()) not in r.text
    assert "Traceback" not in r.text
    for n in needles:
        assert n in body["error"], body["error"]
    return str(body["error"])


def test_health_and_version(client: Any) -> None:
    assert get(client, "/health").json() == {"status": "ok", "store": True}
    v = get(client, "/version").json()
    assert v["api"] == 1 and v["replay_format"] == "paohuzi-replay"
    spec = get(client, "/openapi.json").json()
    assert {"/runs", "/runs/{run}/hands", "/runs/{run}/hands.ndjson", "/stats"} <= set(
        spec["paths"]
    )
    assert get(client, "/docs").status_code == 200


def test_runs_are_paohuzi_runs_json(client: Any, store: Path) -> None:
    rows = get(client, "/runs").json()
    want = cli_json("runs", "--data", str(store), "--json")
    assert [r["run"] for r in rows] == ["a", "dup"]
    for got, exp in zip(rows, want, strict=True):
        assert {k: got[k] for k in exp} == exp
        assert got["damaged"] is False and got["problem"] is None
    one = get(client, "/runs/dup").json()
    assert one["hands"] == 24 and one["duplicate"] is True and one["rotations"] == 3
    assert one["policies"] == ["heuristic", "greedy", "random"]
    assert one["hand_ranges"] == [[0, 23]] and one["damaged"] is False
    assert one["rule_set"]["players"] == 3


FILTERS = [
    ({}, []),
    ({"winner": 1}, ["--winner", "1"]),
    ({"outcome": "huangzhuang"}, ["--outcome", "huangzhuang"]),
    ({"huxi_min": 20}, ["--huxi-min", "20"]),
    ({"huxi_min": 10, "huxi_max": 25}, ["--huxi-min", "10", "--huxi-max", "25"]),
    ({"mingtang": "红胡"}, ["--mingtang", "红胡"]),
    ({"mingtang": "honghu", "winner": 0}, ["--mingtang", "honghu", "--winner", "0"]),
]


@pytest.mark.parametrize("run", ["a", "dup"])
@pytest.mark.parametrize(("query", "args"), FILTERS)
def test_pages_and_ndjson_are_paohuzi_hands(
    client: Any, store: Path, run: str, query: dict[str, Any], args: list[str]
) -> None:
    want = cli_json("hands", run, "--data", str(store), "--json", "--limit", "1000", *args)
    # one page, as the command
    page = get(client, f"/runs/{run}/hands", params={**query, "limit": 1000}).json()
    assert {k: page[k] for k in ("run", "hands", "more")} == want
    # pages of 9 by cursor, and by offset
    got, cursor = [], None
    for _ in range(20):
        q = {**query, "limit": 9, **({"cursor": cursor} if cursor is not None else {})}
        p = get(client, f"/runs/{run}/hands", params=q).json()
        got += p["hands"]
        if not p["more"]:
            assert p["next_cursor"] is None
            break
        cursor = p["next_cursor"]
    assert got == want["hands"]
    by_offset = []
    for offset in range(0, 45, 9):
        q = {**query, "limit": 9, "offset": offset}
        by_offset += get(client, f"/runs/{run}/hands", params=q).json()["hands"]
    assert by_offset == want["hands"]
    # the export, whole and bounded
    r = get(client, f"/runs/{run}/hands.ndjson", params=query)
    assert r.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(ln) for ln in r.text.splitlines()]
    assert lines == want["hands"]
    for row in lines:
        models.HandRow.model_validate(row)
    if len(want["hands"]) > 2:
        first, last = want["hands"][1]["hand_id"], want["hands"][-1]["hand_id"]
        r = get(client, f"/runs/{run}/hands.ndjson", params={**query, "since": first, "max": 2})
        assert [json.loads(ln) for ln in r.text.splitlines()] == want["hands"][1:3]
        r = get(client, f"/runs/{run}/hands.ndjson", params={**query, "until": last - 1})
        assert [json.loads(ln) for ln in r.text.splitlines()] == want["hands"][:-1]


def test_a_page_says_what_the_command_says_with_its_limit(client: Any, store: Path) -> None:
    want = cli_json("hands", "a", "--data", str(store), "--json", "--limit", "5")
    page = get(client, "/runs/a/hands?limit=5").json()
    assert {k: page[k] for k in ("run", "hands", "more")} == want
    assert page["more"] is True and page["next_cursor"] == want["hands"][-1]["hand_id"] + 1
    assert len(get(client, "/runs/a/hands").json()["hands"]) == 40  # default 100


@pytest.mark.parametrize(("run", "hand"), [("a", 0), ("a", 17), ("dup", 23)])
def test_hand_is_paohuzi_export(client: Any, store: Path, run: str, hand: int) -> None:
    for fmt in ("json", "text"):
        res = cli("export", run, str(hand), "--data", str(store), "--format", fmt)
        assert res.exit_code == 0, res.output
        r = get(client, f"/runs/{run}/hands/{hand}" + ("?format=text" if fmt == "text" else ""))
        assert r.content == res.stdout_bytes
        assert r.headers["content-type"].startswith(
            "application/json" if fmt == "json" else "text/plain"
        )
    models.ReplayFile.model_validate(get(client, f"/runs/{run}/hands/{hand}").json())


@pytest.mark.parametrize(
    ("step", "seat"), [(None, None), (0, None), (0, 1), (5, 0), (12, 2), (-1, 1), (-3, None)]
)
def test_state_is_paohuzi_replay_json(
    client: Any, store: Path, step: int | None, seat: int | None
) -> None:
    args = ["replay", "a", "7", "--data", str(store), "--format", "json"]
    params: dict[str, Any] = {}
    if step is not None:
        args += ["--step", str(step)]
        params["step"] = step
    if seat is not None:
        args += ["--seat", str(seat)]
        params["seat"] = seat
    want = cli_json(*args)
    got = get(client, "/runs/a/hands/7/state", params=params).json()
    assert got == want
    models.StateView.model_validate(got)


def test_stats_is_paohuzi_stats_json(client: Any, store: Path) -> None:
    for runs in ([], ["dup"], ["dup", "a"]):
        want = cli_json("stats", *runs, "--data", str(store), "--json")
        q = "&".join(f"run={r}" for r in runs)
        got = get(client, f"/stats?{q}").json()
        assert got == {**want, "warnings": []}
        models.Stats.model_validate(got)
    dup = get(client, "/stats?run=dup").json()["runs"][0]
    assert dup["reviews"] and dup["reviews"][0]["hands"] == 2  # the stored review's rates
    # a run named twice is summarised once, as by the command
    assert [r["run"] for r in get(client, "/stats?run=a&run=a").json()["runs"]] == ["a"]


@pytest.mark.parametrize(
    ("url", "status", "needle"),
    [
        ("/runs/nope", 404, "no run 'nope' in DATA (runs: a, dup)"),
        ("/runs/nope/hands", 404, "no run 'nope'"),
        ("/runs/nope/hands.ndjson", 404, "no run 'nope'"),
        ("/runs/nope/hands/0", 404, "no run 'nope'"),
        ("/runs/nope/hands/0/state", 404, "no run 'nope'"),
        ("/runs/bad%20name", 404, "bad run name 'bad name'"),
        ("/runs/a%00/hands/1", 404, "bad run name"),
        ("/runs/a/hands/40", 404, "run a has no hand 40 (hands 0–39)"),
        ("/runs/a/hands/40/state", 404, "run a has no hand 40"),
        ("/stats?run=a&run=nope", 404, "no run 'nope'"),
        ("/nowhere", 404, "not found: GET /nowhere"),
        ("/runs/a/hands?limit=0", 422, "query parameter limit"),
        ("/runs/a/hands?limit=1001", 422, "less than or equal to 1000"),
        ("/runs/a/hands?winner=x", 422, "query parameter winner"),
        ("/runs/a/hands.ndjson?max=100001", 422, "query parameter max"),
        ("/runs/a/hands/-1", 422, "path parameter hand"),
        ("/runs/a/hands/0?format=xml", 422, "query parameter format"),
        ("/runs/a/hands/0/state?seat=4", 422, "query parameter seat"),
        ("/runs/a/hands/0/state?seat=3", 400, "seat 3 out of range: seats are 0 … 2"),
        ("/runs/a/hands/0/state?step=9999", 400, "step 9999 out of range for run a hand 0"),
        (
            "/runs/a/hands?outcome=win",
            422,
            "query parameter outcome: unknown value 'win' (known: hu, huangzhuang, tianhu_auto, tianhu)",
        ),
        (
            "/runs/a/hands.ndjson?mingtang=xx",
            422,
            "query parameter mingtang: unknown value 'xx' (known: honghu,",
        ),
    ],
)
def test_errors_are_one_json_line(
    client: Any, store: Path, url: str, status: int, needle: str
) -> None:
    error_of(client, url, status, store, needle)


def test_post_is_refused_as_json(client: Any, store: Path) -> None:
    r = client.post("/runs")
    assert r.status_code == 405 and list(r.json()) == ["error"]


def test_limits_are_the_apps(store: Path) -> None:
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app
    from paohuzi.service.limits import Limits

    lim = Limits(page_max=5, stream_max=3)
    assert (lim.page_default, lim.stream_default) == (5, 3)
    with TestClient(create_app(store, lim)) as c:
        assert len(c.get("/runs/a/hands").json()["hands"]) == 5
        assert len(c.get("/runs/a/hands.ndjson").text.splitlines()) == 3
        assert c.get("/runs/a/hands?limit=6").status_code == 422
        assert c.get("/runs/a/hands.ndjson?max=4").status_code == 422
        assert c.get("/stats?" + "&".join(["run=a"] * 101)).status_code == 422


def test_an_empty_or_missing_store(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app

    with TestClient(create_app(tmp_path / "none")) as c:
        assert c.get("/health").json() == {"status": "ok", "store": False}
        assert c.get("/runs").json() == []
        r = c.get("/stats")
        assert r.status_code == 404 and r.json() == {"error": "no runs in the store DATA"}
        assert str(tmp_path) not in c.get("/runs/x").text


def test_query_time_limit(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query longer than --query-seconds is interrupted: 503, one line."""
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app
    from paohuzi.service.limits import Limits
    from replay.store import manage

    def slow(st: Any, run: str, flt: Any, limit: int, offset: int, con: Any, state: Any) -> Any:
        con.execute("SELECT count(*) FROM range(1000000000000) a").fetchall()
        raise AssertionError("not interrupted")

    monkeypatch.setattr(manage, "query_hands", slow)
    with TestClient(create_app(store, Limits(query_seconds=0.2))) as c:
        r = c.get("/runs/a/hands")
    assert r.status_code == 503
    assert r.json() == {"error": "the query took longer than the limit of 0.2 s (--query-seconds)"}


def test_an_error_while_streaming_ends_the_stream_with_one_line(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the stream has begun its status cannot change: the last line says what broke."""
    from fastapi.testclient import TestClient

    from engine.errors import CorruptLog
    from paohuzi.service.app import create_app
    from replay.store import manage

    real = manage.stream_hands

    def broken(*args: Any, **kw: Any) -> Any:
        batches = real(*args, **kw)

        def gen() -> Any:
            yield next(batches)
            raise CorruptLog(f"run a: cannot read shard {store.resolve()}/runs/run=a/x.parquet")

        return gen()

    monkeypatch.setattr(manage, "stream_hands", broken)
    with TestClient(create_app(store)) as c:
        r = c.get("/runs/a/hands.ndjson?max=5")
    assert r.status_code == 200
    lines = [json.loads(ln) for ln in r.text.splitlines()]
    assert [h["hand_id"] for h in lines[:-1]] == [0, 1, 2, 3, 4]
    assert lines[-1] == {"error": "run a: cannot read shard DATA/runs/run=a/x.parquet"}
