"""Honest HTTP caching (issue 59, part 3; docs/SERVICE.md, "Conditional requests"): a
validator never vouches for bytes the server did not send. A stream that may be cut carries
no ETag; ``If-None-Match: *`` matches only a representation that exists; a conditional GET
answers what the plain GET would (never a 304 where it is 409); an ETag names one body,
even while a writer commits into the run; ``/health`` answers past ``--max-connections``.
Every loop here is bounded; every server and writer started here is stopped."""

from __future__ import annotations

import http.client
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from edit_helpers import edit_in_place

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from paohuzi.service.app import create_app  # noqa: E402
from paohuzi.service.process import Server  # noqa: E402


@pytest.fixture
def data(store: Path, tmp_path: Path) -> Path:
    """A copy of the module's store (runs ``a`` and ``dup``), to change."""
    return Path(shutil.copytree(store, tmp_path / "data", symlinks=True))


def _cut_after_first_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The export's query stopped after its first batch, as the time limit stops it."""
    from replay.store import manage

    real = manage.stream_hands

    def cut(*args: Any, **kw: Any) -> Iterator[Any]:
        batches = real(*args, **kw)
        yield next(batches)
        raise RuntimeError("interrupted: the query took longer than the limit")

    monkeypatch.setattr(manage, "stream_hands", cut)


def test_cut_stream_etag_bug(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a stream cut by the time limit carried the complete stream's ETag: revalidated, it got
    # a 304, and the client kept the truncated export as current
    c = TestClient(create_app(data, refresh=0))
    path = "/runs/a/hands.ndjson"
    whole = c.get(path)
    assert whole.status_code == 200 and len(whole.content.splitlines()) == 40
    with monkeypatch.context() as m:
        _cut_after_first_batch(m)
        cut = c.get(path)
    assert cut.status_code == 200 and b'"error"' in cut.content.splitlines()[-1]
    assert cut.content != whole.content
    cut_tag = cut.headers.get("etag")
    assert cut_tag is None or cut_tag != whole.headers.get("etag"), "the cut stream's tag"
    if cut_tag is not None:  # a tag the cut stream had never gets a 304 for the whole one
        r = c.get(path, headers={"If-None-Match": cut_tag})
        assert r.status_code == 200 and r.content == whole.content
    # no validator on a stream at all: nothing to revalidate, nothing to keep
    for r in (whole, cut, c.head(path)):
        assert "etag" not in r.headers and r.headers["cache-control"] == "no-store"
    assert c.get(path, headers={"If-None-Match": "*"}).status_code == 200


#: Requests with no representation, and their status without If-None-Match.
NOTHING_THERE = {
    "/runs/nope": 404,
    "/runs/a/hands/99999": 404,
    "/runs/a/hands/99999/state": 404,
    "/runs/nope/hands.ndjson": 404,
    "/runs/a/hands?limit=0": 422,
    "/runs/a/hands/3/state?step=99999": 400,
    "/stats?run=nope": 404,
    "/no/such/route": 404,
}


def test_if_none_match_star_without_representation_bug(data: Path) -> None:
    # If-None-Match: * answered 304 (with an ETag) for a missing run or hand, a bad
    # parameter, an unknown route: RFC 9110 §13.1.2, * matches a current representation only
    c = TestClient(create_app(data, refresh=0), raise_server_exceptions=False)
    for path, status in NOTHING_THERE.items():
        plain = c.get(path)
        assert plain.status_code == status, (path, plain.text)
        for header in ("*", '"x", *'):
            r = c.get(path, headers={"If-None-Match": header})
            assert (r.status_code, "etag" in r.headers) == (status, False), (path, header)
            assert r.content == plain.content, path
            assert c.head(path, headers={"If-None-Match": header}).status_code == status
    for path in ("/runs/a", "/runs/a/hands/3", "/stats?run=a", "/health"):
        r = c.get(path, headers={"If-None-Match": "*"})  # there is one: 304, with its tag
        assert r.status_code == 304 and r.headers["etag"] == c.get(path).headers["etag"]


def test_conditional_agrees_with_plain_in_refresh_window_bug(data: Path) -> None:
    # inside the refresh interval a hand whose shard was edited in place answered 304 to the
    # tag a client held, while a plain GET of it was 409
    c = TestClient(create_app(data, refresh=3600), raise_server_exceptions=False)
    paths = ["/runs/a/hands/3", "/runs/a/hands/3?format=text", "/runs/a/hands/3/state?step=2"]
    held = {p: c.get(p).headers["etag"] for p in paths}
    for shard in sorted((data / "runs" / "run=a").glob("*/part-*.parquet")):
        edit_in_place(shard, 0x55)
    for p in paths:
        plain = c.get(p)
        assert plain.status_code == 409, (p, plain.status_code, plain.text[:200])
        for header in (held[p], "*"):
            r = c.get(p, headers={"If-None-Match": header})
            assert r.status_code == plain.status_code, (p, header, r.status_code)
            assert "etag" not in r.headers and r.content == plain.content
            assert c.head(p, headers={"If-None-Match": header}).status_code == 409


def _get(port: int, path: str, tag: str | None = None) -> tuple[int, str | None, bytes]:
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        con.request("GET", path, headers={"If-None-Match": tag} if tag else {})
        r = con.getresponse()
        return r.status, r.getheader("etag"), r.read()
    finally:
        con.close()


#: What the pollers ask while the writer commits (run ``w`` is the one written), one thread
#: each.
POLLED = ["/runs/w", "/runs", "/runs/w/hands?limit=3", "/stats?run=w"]
#: The most polling rounds of a thread (each: a plain GET, a conditional GET with the tag
#: held from the round before, a plain GET).
ROUNDS_MAX = 2000


class _Poller(threading.Thread):
    """Rounds of requests of ``path`` until ``done`` is set (and three rounds more), at
    most :data:`ROUNDS_MAX`: every tag's bodies, and the 304s given for a tag whose body
    was not the body then."""

    def __init__(self, port: int, path: str, done: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port, self.path, self.done = port, path, done
        self.bodies: dict[str, set[bytes]] = defaultdict(set)
        self.polls = self.n304 = 0
        self.wrong_304: list[str] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._rounds()
        except BaseException as e:  # noqa: BLE001 (reported by the test)
            self.error = e

    def _rounds(self) -> None:
        held: str | None = None
        after = 3
        for _ in range(ROUNDS_MAX):
            if self.done.is_set():
                after -= 1
                if after < 0:
                    return
            p = _get(self.port, self.path)
            c = _get(self.port, self.path, held)
            q = _get(self.port, self.path)
            self.polls += 3
            for code, tag, body in (p, c, q):
                if code == 200 and tag is not None:
                    self.bodies[tag].add(body)
            if c[0] == 304:
                self.n304 += 1
                assert c[1] == held and c[2] == b"", c
                # the store only moves on: unchanged around the 304, the held tag's body
                # must be the body then
                if p[0] == q[0] == 200 and p[2] == q[2] and self.bodies[c[1]] != {p[2]}:
                    self.wrong_304.append(c[1])
            held = q[1] if q[0] == 200 else None


def test_run_etag_names_two_bodies_bug(data: Path, tmp_path: Path) -> None:
    # around a commit /runs/{run} served the newer body under the previous generation's
    # ETag (7 of 13 tags named two bodies): a client holding the old tag got 304 for a
    # changed run
    writer_cmd = [sys.executable, "-m", "paohuzi.cli", "simulate", "--data", str(data),
                  "--run", "w", "-n", "240", "--shard-hands", "12", "--seed", "5", "-w", "1",
                  "-q"]  # fmt: skip
    done = threading.Event()
    with Server(data, ["--refresh", "0.5"]) as s:
        pollers = [_Poller(s.port, path, done) for path in POLLED]
        with (tmp_path / "writer.err").open("w+b") as err:
            writer = subprocess.Popen(writer_cmd, stdout=subprocess.DEVNULL, stderr=err)
            try:
                for t in pollers:
                    t.start()
                code = writer.wait(timeout=600)
                err.seek(0)
                assert code == 0, err.read()[-2000:]
            finally:
                done.set()
                if writer.poll() is None:
                    writer.kill()
                    writer.wait(timeout=30)
                for t in pollers:
                    t.join(timeout=600)
        assert not any(t.is_alive() for t in pollers)
        for t in pollers:
            assert t.error is None, (t.path, t.error)
        # at rest: only the current body's tag gets a 304, every other tag a 200
        for t in pollers:
            code, _, now = _get(s.port, t.path)
            assert code == 200
            for tag, seen in t.bodies.items():
                if _get(s.port, t.path, tag)[0] == 304 and seen != {now}:
                    t.wrong_304.append(tag)
    for t in pollers:
        two = sum(len(b) > 1 for b in t.bodies.values())
        print(f"{t.path}: polls {t.polls}, 304s {t.n304}, distinct tags {len(t.bodies)},"
              f" tags naming two bodies {two}, wrong 304s {len(t.wrong_304)}")  # fmt: skip
    assert len(pollers[0].bodies) >= 3, "the writer's commits were not seen"
    two_bodies = {t.path: [g for g, b in t.bodies.items() if len(b) > 1] for t in pollers}
    assert not any(two_bodies.values()), two_bodies
    assert not any(t.wrong_304 for t in pollers), {t.path: t.wrong_304 for t in pollers}


def _slow_connection(port: int) -> socket.socket:
    """A connection that has sent part of a request's head, and nothing more."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"GET /runs HTTP/1.1\r\nHost: x\r\n")
    return sock


def test_health_past_max_connections_bug(store: Path) -> None:
    # past --max-connections /health answered 503 too: 257 slow connections kept the
    # liveness probe saying the service was down
    with Server(store, ["--max-connections", "2", "--header-seconds", "60"]) as s:
        slow: list[socket.socket] = []
        try:
            slow = [_slow_connection(s.port) for _ in range(5)]
            time.sleep(0.5)  # let the server take them
            status, body = s.request("GET", "/health", timeout=30)
            assert (status, body) == (200, b'{"status":"ok","store":true}'), (status, body)
            assert s.request("HEAD", "/health", timeout=30)[0] == 200
            status, body = s.request("GET", "/version", timeout=30)  # the limit still holds
            assert status == 503 and b"--max-connections" in body, (status, body)
        finally:
            for sock in slow:
                sock.close()
