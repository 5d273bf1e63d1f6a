"""The Play page (issue 43 item 4), through AppTest: read-only without ``--play`` (it says
how, and writes nothing); with it, a whole hand played by clicking the first option, stored
as the same hand ``paohuzi play`` records from the same seed and moves, compared and
reviewed, with links into the Replay page; a stale click changes nothing. The browser test
(test_browser.py) plays one by clicking in a real browser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from dash_helpers import run_page

from paohuzi.cli.main import main
from replay.play.table import PLAY_ENV


def _texts(at: Any) -> str:
    kinds = ("markdown", "caption", "subheader", "info", "success", "warning", "error", "code")
    return "\n".join(str(x.value) for kind in kinds for x in at.get(kind))


def _export(data: Path) -> dict:
    r = CliRunner().invoke(
        main, ["export", "play", "0", "--data", str(data), "-f", "json", "-o", "-"]
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    doc.pop("title"), doc.pop("source")
    return doc


def test_without_play_the_page_only_says_how(
    tmp_path: Path, use_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PLAY_ENV, raising=False)
    use_store(tmp_path / "data")
    at = run_page("play")
    assert not at.exception
    assert "paohuzi dashboard --play" in _texts(at)
    assert not [b for b in at.button if b.label == "Deal"]
    assert not (tmp_path / "data" / "play").exists()


def play_by_clicking(at: Any, limit: int = 400) -> Any:
    """Click the first option until the hand is over; the app."""
    for _ in range(limit):
        if "Stored as run" in _texts(at):
            return at
        opts = [b for b in at.button if (b.key or "").startswith("pl_opt_")]
        assert opts, _texts(at)
        opts[0].click().run()
        assert not at.exception, at.exception
    raise AssertionError("the hand did not end")


def test_a_hand_played_by_clicking_is_the_hand_the_terminal_plays(
    tmp_path: Path, use_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PLAY_ENV, "1")
    data = tmp_path / "data"
    use_store(data)
    at = run_page("play")
    at.text_input(key="pl_seed").set_value("21")
    at.text_input(key="pl_name").set_value("ann")
    at.text_input(key="pl_opponents").set_value("heuristic,greedy")
    at.text_input(key="pl_compare").set_value("heuristic")
    next(b for b in at.button if b.label == "Deal").click().run()
    assert not at.exception and not at.error, _texts(at)  # no store yet: no error either
    assert len(list((data / "play").glob("*.jsonl"))) == 1  # the table, journalled
    # the first option: journalled at once
    next(b for b in at.button if (b.key or "").startswith("pl_opt_0_")).click().run()
    (table,) = (data / "play").glob("*.jsonl")
    assert len(table.read_text().splitlines()) == 2  # header and one decision
    from dashboard.services import play as psvc
    from engine.actions import PASS

    why = psvc.choose(table, 0, PASS)  # stale: the table holds 1 decision, not 0
    assert why is not None and "older view" in why
    assert len(table.read_text().splitlines()) == 2
    at = play_by_clicking(at)
    text = _texts(at)
    assert "Stored as run play hand 0 (seat 0)" in text
    assert "the same deal: you " in text and " · heuristic " in text
    assert "Your decisions, reviewed" in text and "accuracy" in text
    links = [(x.proto.page, x.proto.query_string) for x in at.get("page_link")]
    assert links[0] == ("replay", "run=play&hand=0&step=0&seat=0")  # the whole hand
    steps = [q for p, q in links[1:] if p == "replay" and q.startswith("run=play&hand=0&step=")]
    assert 1 <= len(steps) <= 3 and len(steps) == len(links) - 1, links  # the costliest
    assert not list((data / "play").glob("*.jsonl"))  # recorded: the table is gone
    m = json.loads((data / "runs" / "run=play" / "manifest.json").read_text())
    assert m["comparisons"][0]["scores"][0]["policy"] == "heuristic" and m["reviews"]
    # the terminal, the same seed and the first option every time: the same hand
    cli = tmp_path / "cli"
    r = CliRunner().invoke(main, ["play", "--data", str(cli), "--seed", "21", "--name", "ann",
                                  "--opponents", "heuristic,greedy", "--compare", "none",
                                  "--no-review"], input="1\n" * 300)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert _export(cli) == _export(data)
    # and another hand
    next(b for b in at.button if b.label == "Play another hand").click().run()
    assert any(b.label == "Deal" for b in at.button)
