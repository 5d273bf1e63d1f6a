"""A ``paohuzi serve`` subprocess on a free loopback port, for the tests that need a real
server (concurrent clients, a server killed mid-import) and for ``make bench-service``.

:class:`Server` starts ``python -m paohuzi.cli serve --port 0``, reads the port from the
line the command prints before it serves, and waits (bounded) until ``/health`` answers;
:meth:`Server.stop` ends it, :meth:`Server.kill` sends SIGKILL. No FastAPI here: the child
imports it.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

#: The line ``paohuzi serve --port 0`` prints first.
_FIRST_LINE = re.compile(r"paohuzi serve: http://127\.0\.0\.1:(\d+)\s")

#: Seconds a server is given to answer ``/health`` after it starts, and to stop.
START_SECONDS = 60.0
STOP_SECONDS = 10.0


class Server:
    """``paohuzi serve --data DATA --port 0 ARGS`` with ``env`` added to this process's
    environment (e.g. ``PAOHUZI_IMPORT_TOKEN``); a context manager that stops it."""

    def __init__(
        self,
        data: str | Path,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        cmd = [sys.executable, "-m", "paohuzi.cli", "serve", "--data", str(data), "--port", "0"]
        self._stderr = ""
        self.proc = subprocess.Popen(
            [*cmd, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode("utf-8", "replace")
        m = _FIRST_LINE.match(line)
        if not m:
            self.stop()
            raise RuntimeError(f"paohuzi serve did not start: {line!r} {self.stderr()!r}")
        self.port = int(m.group(1))
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                status, _ = self.request("GET", "/health", timeout=5)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"paohuzi serve did not answer /health: {self.stderr()!r}")

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 120.0,
    ) -> tuple[int, bytes]:
        """One request on a new connection: the status and the body."""
        con = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            con.request(method, path, body=body, headers=dict(headers or {}))
            r = con.getresponse()
            return r.status, r.read()
        finally:
            con.close()

    def json(self, method: str, path: str, **kw: Any) -> tuple[int, Any]:
        """:meth:`request`, the body read as JSON."""
        status, body = self.request(method, path, **kw)
        return status, json.loads(body)

    def stderr(self) -> str:
        """What the server wrote on stderr (once it has been stopped or killed)."""
        return self._stderr

    def kill(self) -> None:
        """SIGKILL: the server ends wherever it is, without cleaning up."""
        self.proc.kill()
        self.proc.wait(timeout=STOP_SECONDS)
        self._close()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not ended within :data:`STOP_SECONDS`."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close()

    def _close(self) -> None:
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            self._stderr += self.proc.stderr.read().decode("utf-8", "replace")
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
