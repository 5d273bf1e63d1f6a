"""``paohuzi play`` narrates every move the person's seat could see (issue 60: the stock went
from 19 to 13 between two of the person's moves with four lines printed): each card drawn
from the stock (face up once revealed, face down while only its drawer may see it) and each
card nobody takes, placed to a seat's right (:class:`replay.replayer.views.PublicMoves`);
never a card the seat cannot see (engine/observation.py), never another seat's pass."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cards import format_cards
from engine.deck import shuffle_deck
from engine.play import play_hand
from engine.policies import load_policies
from engine.rules import find_rules
from engine.state import Game, Phase
from paohuzi.cli.main import main
from replay.replayer.views import PublicMoves

STOCK = re.compile(r"· stock (\d+) ·")
DRAW = re.compile(r"^(you draw|seat \d \(\w+\) draws) (.+?) from the stock \((\d+) left\)$")


@pytest.mark.parametrize("preset", ["hunan", "hunan-4p", "luzhou"])
def test_every_draw_is_told_and_nothing_hidden(preset: str) -> None:
    rules = find_rules(preset)
    game = Game(rules)
    for seed in range(25):
        viewer = seed % 3 if rules.players == 3 else (1 if seed % 2 else 3)
        state = game.new_initial_state(shuffle_deck(seed), 0)
        stock0 = len(state.stock)
        moves = PublicMoves(viewer)
        moves.watch(state)
        draws = []
        policies = load_policies(
            "heuristic,random,greedy" if rules.players == 3 else "random", rules.players
        )
        for step in play_hand(game, shuffle_deck(seed), 0, policies, seed):
            state = step.state
            events = moves.add(state)
            for i, (seat, seen, _) in enumerate(events):
                if seen["event"] != "draw":
                    continue
                draws.append(seen["stock"])
                if seen["card"] is None:  # face down: only its drawer may see it
                    assert state.phase == Phase.DRAW_TAKE and state.owner == seat != viewer
                    continue
                placed = i + 1 < len(events) and events[i + 1][1] == {
                    "text": None, "event": "untaken", "card": seen["card"]
                }  # fmt: skip
                if not placed and seat != viewer:  # still on offer: the viewer sees it
                    obs = state.observation(viewer)
                    assert obs.card is not None and format_cards([obs.card]) == seen["card"]
        # every card that left the stock was told, once, in order
        assert draws == list(range(stock0 - 1, len(state.stock) - 1, -1)), (seed, draws)


def test_the_terminal_shows_each_draw_between_the_persons_moves(tmp_path: Path) -> None:
    for seed in ("1", "21", "33"):
        res = CliRunner().invoke(
            main,
            ["play", "--data", str(tmp_path / seed), "--seed", seed, "--compare", "none",
             "--no-review", "--speed", "0"],
            input="1\n" * 300,
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        stock, told = 19, 0
        for line in res.stdout.splitlines():
            m = STOCK.search(line)
            if m:  # a view: the stock it shows is the stock less every draw told
                assert int(m.group(1)) == stock - told, (seed, line)
                stock, told = int(m.group(1)), 0
            d = DRAW.match(line)
            if d:
                told += 1
                assert int(d.group(3)) == stock - told, (seed, line)
        assert "过" not in "".join(
            line for line in res.stdout.splitlines() if line.startswith("seat ")
        ), "another seat's pass is private"
