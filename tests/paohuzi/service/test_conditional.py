"""HTTP as the web expects (docs/SERVICE.md, "Conditional requests"; paohuzi.service.caching):
an ETag and Cache-Control on every whole GET answer (none on the streamed export), 304 for
If-None-Match, HEAD on every GET route, /stats and /runs kept per store generation — and
never a 304 or a kept answer for a store that changed: a run added, removed with rm,
resumed, or a shard edited in place (live server, within the refresh interval)."""

from __future__ import annotations

import http.client
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from edit_helpers import edit_in_place

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from paohuzi.cli.main import main  # noqa: E402
from paohuzi.service.app import create_app  # noqa: E402
from paohuzi.service.process import Server  # noqa: E402


def _simulate(data: Path, run: str, n: int, seed: int, *extra: str) -> None:
    r = CliRunner().invoke(main, ["simulate", "--data", str(data), "--run", run, "-n", str(n),
                                  "--seed", str(seed), "-w", "1", "-q", "--shard-hands", "32",
                                  *extra])  # fmt: skip
    assert r.exit_code == 0, r.output


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("conditional") / "data"
    _simulate(d, "a", 96, 1)
    return d


@pytest.fixture
def data(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the module's store, to change."""
    return Path(shutil.copytree(pristine, tmp_path / "data", symlinks=True))


def _client(data: Path) -> TestClient:
    return TestClient(create_app(data, refresh=0))


#: Every GET route of the app (its template) and a request of it.
ROUTES = {
    "/stats": "/stats?run=a",
    "/runs": "/runs",
    "/runs/{run}": "/runs/a",
    "/runs/{run}/hands": "/runs/a/hands?limit=5",
    "/runs/{run}/hands/{hand}": "/runs/a/hands/3",
    "/runs/{run}/hands/{hand}/state": "/runs/a/hands/3/state?step=2",
    "/runs/{run}/hands.ndjson": "/runs/a/hands.ndjson?max=3",
    "/health": "/health",
    "/version": "/version",
    "/openapi.json": "/openapi.json",
}
#: The streamed route: no tag, no 304, not stored (a stream may be cut).
STREAMED = ROUTES["/runs/{run}/hands.ndjson"]
GETS = [*(p for p in ROUTES.values() if p != STREAMED), "/stats"]


@pytest.mark.parametrize("path", GETS)
def test_every_get_has_a_tag_a_304_and_a_head(data: Path, path: str) -> None:
    c = _client(data)
    r = c.get(path)
    assert r.status_code == 200, r.text
    tag = r.headers["etag"]
    assert tag.startswith('"') and tag.endswith('"') and len(tag) > 10
    assert r.headers["cache-control"] == "no-cache"
    again = c.get(path)
    assert again.headers["etag"] == tag and again.content == r.content  # same state, same bytes
    r304 = c.get(path, headers={"If-None-Match": tag})
    assert r304.status_code == 304 and r304.content == b"" and r304.headers["etag"] == tag
    assert c.get(path, headers={"If-None-Match": f'"x", W/{tag}'}).status_code == 304
    assert c.get(path, headers={"If-None-Match": '"other"'}).status_code == 200
    head = c.head(path)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["etag"] == tag
    if "content-length" in r.headers:
        assert head.headers["content-length"] == r.headers["content-length"]


def test_a_stream_has_no_tag_and_answers_head(data: Path) -> None:
    c = _client(data)
    r = c.get(STREAMED)
    assert r.status_code == 200 and len(r.content.splitlines()) == 3
    assert "etag" not in r.headers and r.headers["cache-control"] == "no-store"
    assert c.get(STREAMED, headers={"If-None-Match": "*"}).content == r.content
    head = c.head(STREAMED)
    assert head.status_code == 200 and head.content == b"" and "etag" not in head.headers


def test_every_get_route_answers_head(data: Path) -> None:
    """The routes above are every GET route of the app (so every one is tested)."""
    app = create_app(data, refresh=0)
    gets = {r.path for r in app.routes if "GET" in getattr(r, "methods", ())}  # type: ignore[attr-defined]
    assert gets - {"/docs", "/docs/oauth2-redirect", "/redoc"} == set(ROUTES)


def test_errors_carry_no_tag_and_are_not_kept(data: Path) -> None:
    c = _client(data)
    r = c.get("/stats?run=nope")
    assert r.status_code == 404 and "etag" not in r.headers
    assert c.head("/runs/nope").status_code == 404


def test_a_changed_store_never_gets_a_304_nor_a_kept_answer(data: Path) -> None:
    c = _client(data)
    first = c.get("/stats")
    tag = first.headers["etag"]
    _simulate(data, "b", 64, 2)  # the store changes between two requests with one tag
    r = c.get("/stats", headers={"If-None-Match": tag})
    assert r.status_code == 200 and r.headers["etag"] != tag
    assert [x["run"] for x in r.json()["runs"]] == ["a", "b"]
    runs = c.get("/runs")
    shutil.rmtree(data / "runs" / "run=b")  # removed as `rm -rf` would
    r = c.get("/runs", headers={"If-None-Match": runs.headers["etag"]})
    assert r.status_code == 200 and [x["run"] for x in r.json()] == ["a"]
    assert [x["run"] for x in c.get("/stats").json()["runs"]] == ["a"]


def test_a_kept_answer_is_served_without_a_query(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(data, refresh=0)
    c = TestClient(app)
    first = c.get("/stats?run=a")
    from replay.analysis import stats as stats_mod

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the kept answer was computed again")

    monkeypatch.setattr(stats_mod, "run_stats", refuse)
    again = c.get("/stats?run=a")
    assert again.status_code == 200 and again.content == first.content
    assert c.head("/stats?run=a").headers["etag"] == first.headers["etag"]


def test_the_query_order_is_part_of_the_request(data: Path) -> None:
    _simulate(data, "b", 64, 2)
    c = _client(data)
    ab, ba = c.get("/stats?run=a&run=b"), c.get("/stats?run=b&run=a")
    assert ab.headers["etag"] != ba.headers["etag"]
    assert [x["run"] for x in ba.json()["runs"]] == ["b", "a"]


def _get(
    port: int, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        con.request("GET", path, headers=headers or {})
        r = con.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        con.close()


def _interrupt_after_first_shard(run_path: Path) -> None:
    """The run as a writer killed after its first shard leaves it."""
    from replay.store.manifest import read_manifest, write_manifest

    m = read_manifest(run_path)
    m["shards"] = sorted(m["shards"], key=lambda sh: sh["index"])[:1]
    m["status"] = "interrupted"
    m["progress"] = {"shards": 1, "hands": m["shards"][0]["hands"]}
    write_manifest(run_path, m)


def _until(check: Any, seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, "not seen in time"
        time.sleep(0.1)


def test_live_server_sees_an_edit_in_place_a_run_added_removed_and_resumed(data: Path) -> None:
    with Server(data, ["--refresh", "0.3"]) as s:
        status, h, body = _get(s.port, "/stats")
        assert status == 200 and [r["run"] for r in json.loads(body)["runs"]] == ["a"]
        tag = h["etag"]
        # a run added, then resumed, then removed with rm: each in the next answer
        _simulate(data, "b", 64, 2)
        _interrupt_after_first_shard(data / "runs" / "run=b")
        status, h, body = _get(s.port, "/stats", {"If-None-Match": tag})
        assert status == 200 and [r["hands"] for r in json.loads(body)["runs"]] == [96, 32]
        _simulate(data, "b", 64, 2)  # the same command resumes it
        status, h, body = _get(s.port, "/stats?run=b", {"If-None-Match": h["etag"]})
        assert status == 200 and json.loads(body)["runs"][0]["hands"] == 64
        shutil.rmtree(data / "runs" / "run=b")
        status, _, body = _get(s.port, "/runs")
        assert status == 200 and [r["run"] for r in json.loads(body)] == ["a"]
        # a shard edited in place, same size, mtime restored (only its ctime moves)
        status, h, _ = _get(s.port, "/stats?run=a")
        tag = h["etag"]
        edit_in_place(data / "runs" / "run=a" / "hands" / "part-00001.parquet", 0x55)

        def damaged() -> Any:
            code, hh, b = _get(s.port, "/stats?run=a", {"If-None-Match": tag})
            return (code, b) if code != 304 else None

        code, b = _until(damaged)
        assert code == 409 and "run a" in json.loads(b)["error"]
        code, _, b = _get(s.port, "/stats")  # no figure from it: the only run is damaged
        assert code == 409 and "damaged" in json.loads(b)["error"], b
