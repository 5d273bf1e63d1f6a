"""Requests meant to hurt the service, in-process (issue 40): a large import does not hold
the event loop, URL paths in messages are shown as sent, 405 names the allowed methods, a
trailing slash is 404 (no redirect naming the client's Host), integers are ASCII digits
only, a byte-order mark opens a JSON-lines batch as it opens a file. Each answer is a 4xx
with a one-line JSON error."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

TOKEN = "t0ken-for-the-hostile-tests"
NDJSON = "application/x-ndjson"


def import_client(root: Path) -> Any:
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app

    return TestClient(create_app(root, import_token=TOKEN), raise_server_exceptions=False)


def post(c: Any, body: bytes, media: str = NDJSON, run: str = "field") -> Any:
    headers = {"content-type": media, "authorization": f"Bearer {TOKEN}"}
    return c.post(f"/runs/{run}/hands", content=body, headers=headers)


def error(r: Any, status: int, *words: str) -> str:
    """The answer's one-line JSON error, checked."""
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert list(body) == ["error"] and "\n" not in body["error"], body
    assert "Traceback" not in r.text and "/tmp" not in r.text, body
    for w in words:
        assert w in body["error"], body
    return str(body["error"])


def test_import_parsed_on_the_event_loop_bug(
    tmp_path: Path, replay_lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a JSON-lines import was parsed on the event loop: a 64 MB body froze /health for 5.5 s
    from replay.replayer import importing

    parse = importing.parse_jsonl
    parsing, answered = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def slow_parse(*args: Any, **kw: Any) -> Any:
        """A parse that lasts until /health has answered (at most 20 s)."""
        parsing.set()
        seen["health_first"] = answered.wait(20)
        return parse(*args, **kw)

    monkeypatch.setattr(importing, "parse_jsonl", slow_parse)
    with import_client(tmp_path / "d") as c:
        thread = threading.Thread(
            target=lambda: seen.setdefault("import", post(c, replay_lines[0].encode()))
        )
        thread.start()
        try:
            assert parsing.wait(60), "the import never reached its parse"
            health = c.get("/health")
            answered.set()
        finally:
            answered.set()
            thread.join(60)
    assert health.status_code == 200
    assert seen["health_first"], "/health waited for the import's parse"
    assert seen["import"].status_code == 200 and seen["import"].json()["accepted"] == 1


def test_imports_at_once_unbounded_bug(
    tmp_path: Path, replay_lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # every import held its body (up to 64 MB) while parsed and verified, as many at once as
    # connections came: now --import-at-once of them; one more waits (its body unread) as
    # for a busy run's lock, then 503 with Retry-After
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app
    from paohuzi.service.limits import Limits
    from replay.replayer import importing

    parse = importing.parse_jsonl
    parsing, release = threading.Event(), threading.Event()

    def held_parse(*args: Any, **kw: Any) -> Any:
        parsing.set()
        release.wait(20)
        return parse(*args, **kw)

    monkeypatch.setattr(importing, "parse_jsonl", held_parse)
    lim = Limits(import_at_once=1, import_lock_seconds=0.3)
    app = create_app(tmp_path / "d", lim, import_token=TOKEN)
    seen: dict[str, Any] = {}
    with TestClient(app, raise_server_exceptions=False) as c:
        first = threading.Thread(
            target=lambda: seen.setdefault("first", post(c, replay_lines[0].encode()))
        )
        first.start()
        try:
            assert parsing.wait(60), "the first import never reached its parse"
            second = post(c, replay_lines[1].encode())
        finally:
            release.set()
            first.join(60)
        assert error(second, 503, "1 imports are being received or verified (waited 0.3 s)")
        assert second.headers["retry-after"] == "1"
        assert seen["first"].status_code == 200
        again = post(c, replay_lines[1].encode())  # the slot is free again
        assert again.status_code == 200 and again.json()["accepted"] == 1


def test_import_body_time_unbounded_bug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a body that trickled in held its import (and its slot) for ever: 408 after the limit
    import asyncio

    from fastapi.testclient import TestClient

    from paohuzi.service import app as service_app
    from paohuzi.service import importing as service_importing
    from paohuzi.service.limits import Limits

    async def trickle(_request: Any, _max_bytes: int) -> bytes:
        await asyncio.sleep(30)
        return b""

    monkeypatch.setattr(service_importing, "_bounded_body", trickle)
    app = service_app.create_app(
        tmp_path / "d", Limits(import_body_seconds=0.2), import_token=TOKEN
    )
    with TestClient(app, raise_server_exceptions=False) as c:
        r = post(c, b"{}")
        assert error(r, 408, "did not arrive within 0.2 s", "--import-body-seconds")
        assert post(c, b"").status_code != 503  # its slot was given back


def test_url_path_shown_as_a_file_path_bug(client: Any) -> None:
    # the redactor of the server's paths rewrote the request's path: "PUT …/base"
    r = client.put("/runs/base")
    assert error(r, 405).endswith(": PUT /runs/base")
    assert error(client.get("/runs/a/x/y"), 404) == "not found: GET /runs/a/x/y"
    assert error(client.get("/a%20b/c%0Ad"), 404) == "not found: GET /a%20b/c%0Ad"


def test_405_without_allow_bug(client: Any) -> None:
    # a 405 had no Allow header (and Starlette's names only the first route of a path)
    cases = {
        ("PUT", "/runs/base"): "GET",
        ("DELETE", "/runs/base/hands"): "GET, POST",
        ("POST", "/health"): "GET",
        ("PATCH", "/runs/a/hands/3/state"): "GET",
    }
    for (method, url), allow in cases.items():
        r = client.request(method, url)
        assert r.headers.get("allow") == allow, (method, url, r.headers)
        error(r, 405)


def test_trailing_slash_redirect_bug(client: Any) -> None:
    # /runs/ answered 307 with Location: http://<the client's Host>/runs
    for url in ("/runs/", "/runs/a/", "/runs/a/hands/", "/stats/", "/health/"):
        r = client.get(url, headers={"host": "evil.example"}, follow_redirects=False)
        assert error(r, 404, "not found") == f"not found: GET {url}"
        assert "location" not in r.headers and "evil" not in r.text


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("/runs/a/hands/1_0", "path parameter hand"),
        ("/runs/a/hands/%2B1", "path parameter hand"),
        ("/runs/a/hands/%201", "path parameter hand"),
        ("/runs/a/hands/1%20", "path parameter hand"),
        ("/runs/a/hands/%EF%BC%91", "path parameter hand"),  # a full-width 1
        ("/runs/a/hands/0x1", "path parameter hand"),
        ("/runs/a/hands/1_0/state", "path parameter hand"),
        ("/runs/a/hands?limit=1_0", "query parameter limit"),
        ("/runs/a/hands?limit=%2B5", "query parameter limit"),
        ("/runs/a/hands?limit=+5", "query parameter limit"),  # "+" is a space in a query
        ("/runs/a/hands?offset=-0", "query parameter offset"),
        ("/runs/a/hands?cursor=1_0", "query parameter cursor"),
        ("/runs/a/hands?winner=0_1", "query parameter winner"),
        ("/runs/a/hands?huxi_min=1_0", "query parameter huxi_min"),
        ("/runs/a/hands?huxi_max=--1", "query parameter huxi_max"),
        ("/runs/a/hands.ndjson?since=1_0", "query parameter since"),
        ("/runs/a/hands.ndjson?until=%2010", "query parameter until"),
        ("/runs/a/hands.ndjson?max=1_0", "query parameter max"),
        ("/runs/a/hands/0/state?step=-1_0", "query parameter step"),
        ("/runs/a/hands/0/state?step=%2B1", "query parameter step"),
        ("/runs/a/hands/0/state?seat=-0", "query parameter seat"),
    ],
)
def test_lax_integers_bug(client: Any, url: str, name: str) -> None:
    # int() syntax was accepted: /runs/a/hands/1_0 answered hand 10
    error(client.get(url), 422, name, "Input should be an integer written in digits 0-9")


def test_strict_integers_still_read(client: Any) -> None:
    """Digits, and a leading minus where a value may be negative, are read as before."""
    assert client.get("/runs/a/hands/10").status_code == 200
    assert client.get("/runs/a/hands/010").json() == client.get("/runs/a/hands/10").json()
    assert client.get("/runs/a/hands/0/state?step=-1&seat=0").status_code == 200
    r = client.get("/runs/a/hands?huxi_min=-5&limit=3&offset=1")
    assert r.status_code == 200 and (r.json()["limit"], r.json()["offset"]) == (3, 1)
    error(client.get("/runs/a/hands?winner=-1"), 422, "query parameter winner")


def test_bom_on_the_first_line_of_a_batch_bug(tmp_path: Path, replay_lines: list[str]) -> None:
    # a JSON-lines batch opening with a byte-order mark was "not a JSON object" on line 1,
    # while a one-file body with one was read
    from replay.replayer import importing

    bom = b"\xef\xbb\xbf"
    batch = bom + "\n".join(replay_lines[:2]).encode("utf-8")
    items = importing.parse_jsonl(batch)
    assert [(i.line, i.error) for i in items] == [(1, None), (2, None)]
    assert items[0].file is not None and items[1].file is not None
    with import_client(tmp_path / "d") as c:
        r = post(c, batch)
        assert r.status_code == 200, r.text
        assert [h["status"] for h in r.json()["hands"]] == ["accepted", "accepted"]
        r = post(c, bom + replay_lines[2].encode("utf-8"), media="application/json")
        assert r.status_code == 200 and r.json()["accepted"] == 1, r.text
    # a mark anywhere else is no part of JSON: that line is refused, as before
    later = importing.parse_jsonl(replay_lines[3].encode() + b"\n" + bom + b"{}")
    assert later[0].error is None and later[1].error is not None


def test_non_ascii_token_refused_by_the_app_bug(tmp_path: Path) -> None:
    # a token a client cannot send (not ASCII) was taken, and no request could bear it
    from paohuzi.service.app import create_app

    for bad in ("tökentökentökentöken", "token-with-a-tab\there"):
        with pytest.raises(ValueError, match="printable ASCII"):
            create_app(tmp_path, import_token=bad)


def test_errors_stay_json_for_odd_requests(client: Any) -> None:
    """Odd methods, encodings and sizes: a 4xx with one JSON line, never a traceback."""
    error(client.request("TRACE", "/runs"), 405)
    error(client.get("/runs/" + "x" * 300), 422, "path parameter run")
    error(client.get("/runs/%00"), 404)
    error(client.get("/" + "a/" * 400), 404, "not found: GET /a/a/")
    long = error(client.get("/" + "b" * 5000), 404)
    assert len(long) <= 400
    r = client.get("/runs/a/hands", params={"limit": "9" * 5000})
    assert len(error(r, 422, "query parameter limit")) <= 400
    body = json.dumps({"x": 1}).encode()
    error(client.post("/runs/a/hands", content=body), 403, "import disabled")
