"""``paohuzi serve``: one Error line without FastAPI, its limits from its flags, and a real
server on a free port that answers (bounded: it is stopped after at most 60 s)."""

from __future__ import annotations

import json
import re
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


def test_flags_become_the_limits(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    seen: dict[str, Any] = {}

    def run(app: Any, host: str, port: int, **kw: Any) -> None:
        seen.update(limits=app.state.limits, host=host, port=port)

    monkeypatch.setattr(uvicorn, "run", run)
    res = cli("serve", "--data", str(store), "--page-max", "20", "--stream-max", "500",
              "--query-seconds", "2.5", "--port", "8123")  # fmt: skip
    assert res.exit_code == 0, res.output
    lim = seen["limits"]
    assert (lim.page_max, lim.page_default, lim.stream_max, lim.query_seconds) == (20, 20, 500, 2.5)
    assert (seen["host"], seen["port"]) == ("127.0.0.1", 8123)
    for bad in (["--page-max", "0"], ["--query-seconds", "0"], ["--port", "70000"]):
        res = cli("serve", "--data", str(store), *bad)
        assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1, res.output


def test_a_real_server_answers(store: Path) -> None:
    """``--port 0``: the port the system chose, on the first line; the server answers."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "replay.cli", "serve", "--data", str(store), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()  # written before the server starts
        m = re.match(r"paohuzi serve: http://127\.0\.0\.1:(\d+)  \(store ", line)
        assert m, (line, proc.stderr.read().decode() if proc.poll() is not None else "")
        port = int(m.group(1))
        assert port > 0
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
