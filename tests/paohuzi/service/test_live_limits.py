"""The server's own limits against a real ``paohuzi serve`` on a loopback port (issue 40;
:mod:`paohuzi.service.server`): a request head over ``--header-bytes`` is 431 and a malformed
one 400, both in the API's JSON; a head that takes longer than ``--header-seconds`` (a
client sending its headers a line at a time, or nothing at all) is cut off; a request past
``--max-connections`` is 503 in JSON. Every loop and read here is bounded."""

from __future__ import annotations

import json
import re
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from paohuzi.service.process import Server

#: The head deadline of the server under test, and the most seconds a test waits for it
#: to act (generous: the machine may be slow).
HEADER_SECONDS = 2
PATIENCE = 20.0


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[Server]:
    with Server(store, ["--header-seconds", str(HEADER_SECONDS)]) as s:
        yield s


def connect(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE)


def read_all(sock: socket.socket, seconds: float = PATIENCE) -> bytes:
    """What the server sends until it closes the connection (at most ``seconds``)."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def json_error(answer: bytes, status: int, *words: str) -> str:
    """The JSON error of a raw HTTP answer, its status and content type checked."""
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith(f"HTTP/1.1 {status} "), answer[:300]
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers["content-type"] == "application/json", headers
    obj = json.loads(body)
    assert list(obj) == ["error"] and "\n" not in obj["error"], obj
    for w in words:
        assert w in obj["error"], obj
    return str(obj["error"])


def test_oversized_head_is_plain_text_bug(server: Server) -> None:
    # uvicorn answered a head larger than h11's buffer with a plain-text 400 (when it came
    # in pieces) and served it (when it came at once)
    big = b"X-Big: " + b"a" * 20_000 + b"\r\n"
    start = b"GET /health HTTP/1.1\r\nHost: x\r\n"
    with connect(server) as sock:  # in pieces, never complete
        sock.sendall(start)
        sock.sendall(big)
        json_error(read_all(sock), 431, "larger than 16,384 bytes", "--header-bytes")
    with connect(server) as sock:  # complete
        sock.sendall(start + big + b"\r\n")
        json_error(read_all(sock), 431, "larger than 16,384 bytes", "--header-bytes")
    with connect(server) as sock:
        sock.sendall(b"NOT AN HTTP REQUEST\r\n\r\n")
        json_error(read_all(sock), 400, "not an HTTP/1.1 request")
    # a head within the limit is served
    status, _ = server.request("GET", "/health", headers={"X-Fine": "a" * 10_000})
    assert status == 200


def _one_answer(sock: socket.socket) -> bytes:
    """One whole answer of a kept-alive connection: its head, and its body by its
    content-length (a body may come in a segment of its own)."""
    data = b""
    deadline = time.monotonic() + PATIENCE
    while True:
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            m = re.search(rb"(?im)^content-length: *(\d+)\r?$", head)
            if m is not None and len(body) >= int(m.group(1)):
                return data
        ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
        chunk = sock.recv(65536) if ready else b""
        if not chunk:
            return data
        data += chunk


def test_slow_head_held_forever_bug(server: Server) -> None:
    # nothing bounded the time of a request's head: 300 slow sockets were held for ever
    with connect(server) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        start = time.monotonic()
        answer = b""
        for _ in range(int(PATIENCE / 0.2)):  # a header line every 0.2 s, at most PATIENCE
            ready, _, _ = select.select([sock], [], [], 0.2)
            if ready:
                answer = read_all(sock, 5)
                break
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:  # closed under us: the answer was sent before
                answer = read_all(sock, 5)
                break
        took = time.monotonic() - start
        json_error(answer, 408, f"within {HEADER_SECONDS} s", "--header-seconds")
    assert HEADER_SECONDS * 0.9 <= took < PATIENCE, took
    with connect(server) as sock:  # nothing sent: closed, without an answer
        start = time.monotonic()
        assert read_all(sock) == b""
        assert time.monotonic() - start < PATIENCE - 1
    with connect(server) as sock:  # a request on time, then a slow second head
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        first = _one_answer(sock)
        assert first.startswith(b"HTTP/1.1 200 "), first[:300]
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        json_error(read_all(sock), 408, "--header-seconds")


def test_too_many_connections_answer_json(store: Path) -> None:
    """Past ``--max-connections``, a request is 503 with a JSON error (uvicorn's own limit
    answers in plain text); not ``/health`` (test_honest_caching.py)."""
    with Server(store, ["--max-connections", "2"]) as server:
        idle = [connect(server), connect(server)]
        try:
            time.sleep(0.5)  # let the server take them
            with connect(server) as sock:
                sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
                json_error(read_all(sock), 503, "more than 2 connections", "--max-connections")
        finally:
            for s in idle:
                s.close()
        deadline = time.monotonic() + PATIENCE
        status = 0
        while status != 200 and time.monotonic() < deadline:  # served again once they go
            time.sleep(0.2)
            status, _ = server.request("GET", "/version", timeout=PATIENCE)
        assert status == 200
