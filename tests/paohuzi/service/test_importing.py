"""POST /runs/{run}/hands: the token (none configured: 403, wrong: 401, nothing written),
per-hand verdicts (valid, illegal, wrong outcome, duplicate, malformed), and
``paohuzi import --jsonl`` through the same library function."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from service_helpers import cli

TOKEN = "t0ken-for-the-import-tests"


@pytest.fixture(scope="module")
def lines(store: Path) -> list[str]:
    from replay.replayer import replay_file

    return [
        json.dumps(
            json.loads(replay_file.export_hand(store, "a", i, "json")[0]), ensure_ascii=False
        )
        for i in range(6)
    ]


def app_client(root: Path, token: str | None) -> Any:
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app

    return TestClient(create_app(root, import_token=token), raise_server_exceptions=False)


def post(c: Any, body: str, token: str | None = TOKEN, run: str = "field") -> Any:
    headers = {"content-type": "application/x-ndjson"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return c.post(f"/runs/{run}/hands", content=body.encode(), headers=headers)


def test_disabled_and_wrong_token_write_nothing(tmp_path: Path, lines: list[str]) -> None:
    root = tmp_path / "d"
    with app_client(root, None) as c:
        r = post(c, lines[0])
        assert r.status_code == 403 and "import disabled" in r.json()["error"]
    with app_client(root, TOKEN) as c:
        for tok in (None, "wrong-token-of-some-length"):
            r = post(c, lines[0], tok)
            assert r.status_code == 401 and list(r.json()) == ["error"]
            assert r.headers["www-authenticate"] == "Bearer"
    assert not (root / "runs").exists()


def test_per_hand_verdicts(tmp_path: Path, lines: list[str]) -> None:
    root = tmp_path / "d"
    bad_outcome = json.loads(lines[1])
    bad_outcome["outcome"]["stock_left"] = "77"
    illegal = json.loads(lines[2])
    ev = illegal["events"]
    k = next(i for i, e in enumerate(ev) if len(e.get("options", [])) > 1)
    other = next(e["action"] for e in ev if e["action"] not in ev[k]["options"])
    ev[k]["action"] = other
    ev[k].pop("code", None)
    body = "\n".join(
        [lines[0], json.dumps(bad_outcome), json.dumps(illegal), "not json", "", lines[0], lines[3]]
    )
    with app_client(root, TOKEN) as c:
        r = post(c, body)
        assert r.status_code == 200, r.text
        a = r.json()
        got = [(h["line"], h["status"], h["reason"], h["hand_id"]) for h in a["hands"]]
        assert got == [
            (1, "accepted", None, 0),
            (2, "refused", "outcome_differs", None),
            (3, "refused", "illegal", None),
            (4, "refused", "malformed", None),
            (6, "refused", "duplicate", None),
            (7, "accepted", None, 1),
        ]
        assert a["hands"][2]["event"] == k and (a["accepted"], a["refused"]) == (2, 4)
        assert str(root) not in r.text
        # stored hands are duplicates now; every page works on the run
        r = post(c, lines[3])
        assert r.json()["hands"][0]["reason"] == "duplicate"
        assert c.get("/runs/field").json()["hands"] == 2
        stats = c.get("/stats", params={"run": "field"}).json()["runs"]
    res = cli("stats", "field", "--data", str(root), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["runs"] == stats
    assert cli("verify", "--data", str(root)).exit_code == 0


def test_import_jsonl(tmp_path: Path, lines: list[str]) -> None:
    root = tmp_path / "d"
    f = tmp_path / "b.jsonl"
    f.write_text("\n".join([lines[4], "{", lines[4]]) + "\n", encoding="utf-8")
    res = cli("import", "--jsonl", str(f), "--run", "x", "--data", str(root))
    assert res.exit_code == 1, res.output
    out = res.stdout.splitlines()
    assert out[0].endswith("line 1: accepted as run x hand 0")
    assert "line 2: refused (malformed)" in out[1] and "line 3: refused (duplicate)" in out[2]
    res = CliRunnerStdin(lines[5] + "\n", "--run", "x", "--data", str(root))
    assert res.exit_code == 0 and "accepted as run x hand 1" in res.stdout, res.output


def CliRunnerStdin(text: str, *args: str) -> Any:  # noqa: N802
    from click.testing import CliRunner

    from paohuzi.cli.main import main

    return CliRunner().invoke(main, ["import", "--jsonl", "-", *args], input=text)
