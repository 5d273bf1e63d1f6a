"""The Python API's objects print in card notation (issue 60: the Python API example printed
``0 10 False`` for a step): a step, an action, a 门子, an outcome and a state, while equality
and hashes stay the fields' and the engine still passes small ints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from engine.actions import DISCARD_BASE, decode
from engine.deck import shuffle_deck
from engine.groups import Group, GroupKind
from engine.play import play_hand, play_to_end
from engine.policies import load_policies
from engine.rules import find_rules
from engine.state import Game

API = Path(__file__).resolve().parents[2] / "docs" / "API.md"
CARD = "[一二三四五六七八九十壹贰叁肆伍陆柒捌玖拾]"


def test_the_documented_example_prints_card_notation() -> None:
    text = API.read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), str(API), "exec"), {})  # noqa: S102 - the docs' own code
    lines = out.getvalue().splitlines()
    steps = [line for line in lines if line.startswith("seat ") and ": " in line]
    assert len(steps) > 10, lines[:5]
    for line in steps[:-3]:
        assert re.fullmatch(
            rf"seat \d: (过|胡|碰|打 {CARD}|[提偎跑] {CARD}|吃 (\[{CARD}+\])+)( \(forced\))?", line
        ), line
    assert not any(re.fullmatch(r"[\d\s]+(True|False)", line) for line in lines), lines[:5]
    assert any(line.startswith(("荒庄 · deltas", "胡 seat", "天胡", "3提")) for line in lines)


def test_objects_print_in_notation_and_compare_as_before() -> None:
    game = Game(find_rules("hunan"))
    step = next(play_hand(game, shuffle_deck(7), 0, load_policies("heuristic", 3), 7))
    assert isinstance(step.action, int) and step.action == DISCARD_BASE + 0
    assert str(step) == "seat 0: 打 一"
    assert repr(step) == "Step(seat=0, action=10 '打 一', forced=False, n_legal=15)"
    a, b = decode(144), decode(144)
    assert repr(a) == "Action('吃 [一二三][三四五]')" and str(a) == "吃 [一二三][三四五]"
    assert a == b and hash(a) == hash(b) and a.groups == ((0, 1, 2), (2, 3, 4))
    g = Group(GroupKind.PENG, (4, 4, 4))
    assert repr(g) == "Group('碰五')" and g == Group(GroupKind.PENG, (4, 4, 4))
    assert hash(g) == hash(Group(GroupKind.PENG, (4, 4, 4)))
    for seed in range(1, 40):  # a won hand's outcome
        state = play_to_end(game, shuffle_deck(seed), 0, load_policies("heuristic", 3), seed)
        o = state.outcome
        assert o is not None
        if o.winner is not None and o.result is not None and o.card is not None:
            break
    text = str(o)
    assert text.startswith(f"胡 seat {o.winner} on ") and "胡息" in text and "deltas" in text
    assert re.search(rf"on {CARD} \(", text), text
    assert str(state).splitlines()[-1] == text  # the state's view ends with the same line
