"""``paohuzi serve``: one Error line without FastAPI, its limits from its flags, and a real
server on a free port that answers (bounded: it is stopped after at most 60 s)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from service_helpers import cli


@pytest.mark.parametrize("module", ["fastapi", "uvicorn"])
def test_without_the_service_extra(
    module: str, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fastapi: ImportError
    res = cli("serve", "--data", str(store))
    assert res.exit_code == 2, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0] == (
        f"Error: paohuzi serve needs {module}, which is not installed:"
        " pip install 'paohuzi[service]'"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_flags_become_the_limits(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from paohuzi.service.server import Protocol

    seen: dict[str, Any] = {}

    def run(self: Any, sockets: Any = None) -> None:
        (sock,) = sockets
        seen.update(config=self.config, address=sock.getsockname())
        sock.close()

    monkeypatch.setattr(uvicorn.Server, "run", run)
    port = free_port()
    res = cli("serve", "--data", str(store), "--page-max", "20", "--stream-max", "500",
              "--query-seconds", "2.5", "--port", str(port), "--header-seconds", "3.5",
              "--header-bytes", "9000", "--keep-alive-seconds", "7",
              "--max-connections", "9")  # fmt: skip
    assert res.exit_code == 0, res.output
    config = seen["config"]
    lim = config.app.state.limits
    assert (lim.page_max, lim.page_default, lim.stream_max, lim.query_seconds) == (20, 20, 500, 2.5)
    assert (lim.header_seconds, lim.header_bytes, lim.keep_alive_seconds) == (3.5, 9000, 7)
    assert lim.max_connections == 9
    assert issubclass(config.http, Protocol) and config.http.limits == lim
    assert config.timeout_keep_alive == 7
    assert seen["address"] == ("127.0.0.1", port)
    for bad in (["--page-max", "0"], ["--query-seconds", "0"], ["--port", "70000"],
                ["--header-seconds", "0"], ["--max-connections", "0"]):  # fmt: skip
        res = cli("serve", "--data", str(store), *bad)
        assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1, res.output


def test_a_port_in_use_is_one_line(store: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = cli("serve", "--data", str(store), "--port", str(port))
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines() == [
        f"Error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]


def test_port_printed_before_listening_bug(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --port 0 printed the port about 20 ms before the socket listened: a client that
    # connected on reading it was refused
    import click
    import uvicorn

    echo = click.echo
    connected: list[bool] = []

    def echo_and_connect(message: Any = None, *args: Any, **kw: Any) -> None:
        echo(message, *args, **kw)
        m = re.match(r"paohuzi serve: http://127\.0\.0\.1:(\d+) ", str(message))
        if m:
            try:
                socket.create_connection(("127.0.0.1", int(m.group(1))), timeout=10).close()
                connected.append(True)
            except ConnectionRefusedError:
                connected.append(False)

    def run(self: Any, sockets: Any = None) -> None:
        for sock in sockets or ():
            sock.close()

    monkeypatch.setattr(click, "echo", echo_and_connect)
    monkeypatch.setattr(uvicorn.Server, "run", run)
    res = cli("serve", "--data", str(store), "--port", "0")
    assert res.exit_code == 0, res.output
    assert connected == [True]


@pytest.mark.parametrize("token", ["tökentökentökentöken", "token\x01token-token-token"])
def test_non_ascii_token_accepted_bug(
    token: str, store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a token of other than printable ASCII was taken at start and could never authenticate
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    monkeypatch.setenv("PAOHUZI_IMPORT_TOKEN", token)
    res = cli("serve", "--data", str(store), "--port", "0")
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.splitlines()
    assert line.startswith("Error: $PAOHUZI_IMPORT_TOKEN: a token is at least 16 printable ASCII")
    monkeypatch.delenv("PAOHUZI_IMPORT_TOKEN")
    path = tmp_path / "token"
    path.write_text(token + "\n", encoding="utf-8")
    res = cli("serve", "--data", str(store), "--port", "0", "--import-token-file", str(path))
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1, res.output
    path.write_bytes(b"\xef\xbb\xbf" + b"t" * 20 + b"\n")  # a BOM is no part of the token
    res = cli("serve", "--data", str(store), "--port", "0", "--import-token-file", str(path))
    assert res.exit_code == 0, res.output


def test_the_former_ingest_spellings_still_read(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The --ingest-* options and $PAOHUZI_INGEST_TOKEN, named --import-* and
    $PAOHUZI_IMPORT_TOKEN since issue 41, still work; --help shows only the new names, and an
    error names the new one."""
    import uvicorn

    apps: list[Any] = []

    def run(self: Any, sockets: Any = None) -> None:
        for sock in sockets or ():
            sock.close()
        apps.append(self.config.app)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    monkeypatch.delenv("PAOHUZI_IMPORT_TOKEN", raising=False)
    monkeypatch.delenv("PAOHUZI_INGEST_TOKEN", raising=False)
    path = tmp_path / "token"
    path.write_text("t" * 20 + "\n", encoding="utf-8")
    new = ["--import-bytes", "11", "--import-lines", "12", "--import-line-bytes", "13",
           "--import-lock-seconds", "1.5", "--import-at-once", "3", "--import-body-seconds",
           "4.5", "--import-token-file", str(path)]  # fmt: skip
    old = [a.replace("--import-", "--ingest-") for a in new]
    for args in (new, old):
        res = cli("serve", "--data", str(store), "--port", "0", *args)
        assert res.exit_code == 0, res.output
        lim = apps[-1].state.limits
        assert (lim.import_bytes, lim.import_lines, lim.import_line_bytes) == (11, 12, 13)
        assert (lim.import_lock_seconds, lim.import_at_once, lim.import_body_seconds) == (
            1.5,
            3,
            4.5,
        )
        assert apps[-1].state.importing
    for env in ("PAOHUZI_IMPORT_TOKEN", "PAOHUZI_INGEST_TOKEN"):
        monkeypatch.setenv(env, "u" * 20)
        res = cli("serve", "--data", str(store), "--port", "0")
        assert res.exit_code == 0 and apps[-1].state.importing, res.output
        monkeypatch.delenv(env)
    # the new name wins over the old
    monkeypatch.setenv("PAOHUZI_IMPORT_TOKEN", "short")
    monkeypatch.setenv("PAOHUZI_INGEST_TOKEN", "u" * 20)
    res = cli("serve", "--data", str(store), "--port", "0")
    assert res.exit_code == 2 and "$PAOHUZI_IMPORT_TOKEN" in res.stderr, res.output
    shown = cli("serve", "--help").output
    assert "--import-at-once" in shown and "ingest" not in shown.lower()
    res = cli("serve", "--data", str(store), "--ingest-at-once", "0")
    assert res.exit_code == 2 and "'--import-at-once'" in res.stderr, res.output
    assert "--ingest" not in res.stderr


def test_a_real_server_answers(store: Path) -> None:
    """``--port 0``: the port the system chose, on the first line; the server answers."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "paohuzi.cli", "serve", "--data", str(store), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()  # written once the socket listens
        m = re.match(r"paohuzi serve: http://127\.0\.0\.1:(\d+)  \(store ", line)
        assert m, (line, proc.stderr.read().decode() if proc.poll() is not None else "")
        port = int(m.group(1))
        assert port > 0
        socket.create_connection(("127.0.0.1", port), timeout=10).close()  # no retry needed
        deadline = time.monotonic() + 60
        body = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/runs", timeout=5) as r:
                    body = json.load(r)
                break
            except OSError:
                time.sleep(0.2)
        assert body is not None, proc.stderr.read().decode() if proc.poll() is not None else ""
        assert [r["run"] for r in body] == ["a", "dup"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
