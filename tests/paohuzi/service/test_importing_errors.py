"""POST /runs/{run}/hands refused, each with its status and a one-line JSON error, the
data directory byte for byte as before: a body over the limit (413), a batch of more files
than the limit (413), a content type it does not read (415), a simulated run (409), a run
whose lock another writer holds (503), a one-file body that is no replay file (422), no
token configured (403), a wrong token (401); and the per-hand refusals of a hand with
unknown rules and of a line longer than the limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paohuzi.service.limits import Limits
from replay import store as store_api

TOKEN = "t0ken-for-the-import-error-tests"
NDJSON = "application/x-ndjson"


def client(root: Path, token: str | None = TOKEN, **limits: Any) -> Any:
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app

    app = create_app(root, Limits(**limits), import_token=token)
    return TestClient(app, raise_server_exceptions=False)


def post(c: Any, body: str, media: str = NDJSON, token: str | None = TOKEN, run: str = "field"):
    headers = {"content-type": media}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return c.post(f"/runs/{run}/hands", content=body.encode("utf-8"), headers=headers)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (its relative path) and its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def refused(r: Any, status: int, *words: str) -> str:
    """The answer's one-line error, checked: ``status``, ``{"error": …}`` only, no path of
    the server, each of ``words`` in it."""
    assert r.status_code == status, r.text
    body = r.json()
    assert list(body) == ["error"] and "\n" not in body["error"], body
    assert "Traceback" not in r.text and "/tmp" not in r.text, body
    for w in words:
        assert w in body["error"], body
    return str(body["error"])


@pytest.fixture
def root(tmp_path: Path, replay_lines: list[str]) -> Path:
    """A store with run ``field`` of one imported hand."""
    d = tmp_path / "d"
    with client(d) as c:
        r = post(c, replay_lines[0])
        assert r.status_code == 200 and r.json()["accepted"] == 1, r.text
    return d


def test_whole_request_refusals_write_nothing(
    root: Path, store: Path, replay_lines: list[str]
) -> None:
    before = snapshot(root)
    batch = "\n".join(replay_lines[1:4])
    with client(root, import_bytes=len(batch.encode()) - 1) as c:
        refused(post(c, batch), 413, "larger than", "--import-bytes")
        refused(post(c, replay_lines[1], media="application/xml"), 415, "application/xml")
        refused(post(c, replay_lines[1], media=""), 415, "none")
    with client(root, import_lines=2) as c:
        refused(post(c, batch), 413, "3 replay files", "limit of 2", "--import-lines")
        refused(post(c, "{not json", media="application/json"), 422, "bad JSON")
        refused(post(c, "hello", media="text/plain"), 422, "expected a section")
        refused(post(c, "[1, 2]", media="application/json"), 422, "request body")
        refused(post(c, replay_lines[1], run="no such/run"), 404)
        refused(post(c, replay_lines[1], run="-x"), 422, "bad run name")
        refused(post(c, "\n\n"), 400, "no replay file")
        refused(post(c, replay_lines[1], token=None), 401, "Bearer")
        r = post(c, replay_lines[1], token="not-the-token-of-this-service")
        refused(r, 401, "token")
        assert r.headers["www-authenticate"] == "Bearer"
    with client(root, token=None) as c:
        refused(post(c, replay_lines[1]), 403, "import disabled")
        refused(post(c, replay_lines[1], token=TOKEN), 403, "import disabled")
    assert snapshot(root) == before
    simulated = snapshot(store)
    with client(store) as c:
        refused(post(c, replay_lines[1], run="a"), 409, "simulated run")
    assert snapshot(store) == simulated


def test_a_busy_run_lock_is_503(root: Path, replay_lines: list[str]) -> None:
    before = snapshot(root)
    with (
        client(root, import_lock_seconds=0) as c,
        store_api.RunLock(store_api.run_dir(root, "field")),
    ):
        refused(post(c, replay_lines[1]), 503, "being written by another process")
    assert snapshot(root) == before


def test_per_hand_refusals(root: Path, replay_lines: list[str]) -> None:
    """Unknown rules and a line over ``--import-line-bytes`` refuse that hand only."""
    unknown = json.loads(replay_lines[1])
    unknown["rules"] = {"preset": "no-such-rules", "set": []}
    limit = max(len(x.encode()) for x in (replay_lines[3], json.dumps(unknown))) + 1
    long_line = json.dumps({**json.loads(replay_lines[2]), "title": "长" * limit})
    with client(root, import_line_bytes=limit) as c:
        r = post(c, "\n".join([json.dumps(unknown), long_line, replay_lines[3]]))
    assert r.status_code == 200, r.text
    got = [(h["line"], h["status"], h["reason"]) for h in r.json()["hands"]]
    assert got == [
        (1, "refused", "unknown_rules"),
        (2, "refused", "too_long"),
        (3, "accepted", None),
    ]
    assert "no-such-rules" in r.json()["hands"][0]["error"]
