"""Perft-like counts from fixed deals, kept as data (STYLE §15) and checked against both engines.

From a fixed deal (rules preset, the whole deck in card notation, dealer) the counts are, for
each depth k up to the deal's ``depth``, the number of distinct legal decision sequences of
length k (``nodes``), how many of them end the hand (``ends``) and how many end with a
compulsory decision (``forced``). A decision is one seat's declaration, in the order
:meth:`engine.state.State.deciders` asks them (simultaneous claims are declared seat by seat,
§8.4 C15); a compulsory 提/偎/跑 and any other decision with one option is one branch; chance
is fixed by the deck, so only decisions branch. A sequence that ends the hand is not extended.

Both engines walk the same tree: the reference with ``State.legal_actions`` / ``clone`` /
``apply``, the compiled one with the kernels of :mod:`engine.fast.state` (``legal_actions``,
``apply_checked``, ``current_player``; the state is one int32 array, so ``ndarray.copy()``
is its clone), as tests/engine/fast/test_state_equal.py steps it.

The data is tests/engine/perft.json. After a deliberate rule change, regenerate it with the
reference engine and review the diff::

    .venv/bin/python tests/engine/test_perft.py --regen

(``python tests/engine/test_perft.py`` alone recomputes and prints the counts and timings
of both engines without writing anything.)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine.cards import format_cards, parse_cards
from engine.deck import shuffle_deck
from engine.rules import RuleSet, find_rules
from engine.state import Game, State

DATA = Path(__file__).with_name("perft.json")

#: The fixed deals (preset, deck seed, dealer, depth) the data is generated from: a 亮张 that
#: may be won at once (seed 648), dealt quads (compulsory 提s first, seed 11), the 4-player
#: table with its sitter and shown bottom card, and Luzhou (its own 胡息 table and 吃 shapes).
DEALS: list[tuple[str, int, int, int]] = [
    ("hunan", 648, 0, 7),
    ("hunan", 11, 2, 7),
    ("hunan-4p", 25, 1, 7),
    ("luzhou", 982, 1, 7),
]

Counts = dict[str, list[int]]


def perft_reference(rules: RuleSet, deck: list[int], dealer: int, depth: int) -> Counts:
    """The counts of one deal with the reference engine (engine.state)."""
    nodes, ends, forced = [1] + [0] * depth, [0] * (depth + 1), [0] * (depth + 1)
    stack: list[tuple[State, int]] = [(Game(rules).new_initial_state(deck, dealer), 0)]
    if stack[0][0].outcome is not None:
        ends[0] = 1
    while stack:
        state, ply = stack.pop()
        if ply == depth or state.outcome is not None:
            continue
        seat = state.current_player()
        assert seat is not None
        is_forced = state.forced
        for a in state.legal_actions(seat):
            child = state.clone()
            child.apply(seat, a)
            nodes[ply + 1] += 1
            forced[ply + 1] += is_forced
            if child.outcome is not None:
                ends[ply + 1] += 1
            stack.append((child, ply + 1))
    return {"nodes": nodes, "ends": ends, "forced": forced}


def perft_fast(rules: RuleSet, deck: list[int], dealer: int, depth: int) -> Counts:
    """The counts of one deal with the compiled engine (engine.fast.state kernels)."""
    import numpy as np

    from engine.fast import state as S
    from engine.fast.rule_arrays import rule_arrays

    rp, hp = rule_arrays(rules)
    st = np.zeros(S.STATE_SIZE, dtype=np.int32)
    S.new_state(rp, hp, np.array(deck, dtype=np.int64), dealer, st)
    buf = np.zeros(S.MAXA, dtype=np.int64)
    nodes, ends, forced = [1] + [0] * depth, [0] * (depth + 1), [0] * (depth + 1)
    if st[S.OUT_KIND] >= 0:
        ends[0] = 1
    stack = [(st, 0)]
    while stack:
        st, ply = stack.pop()
        if ply == depth or st[S.OUT_KIND] >= 0:
            continue
        seat = S.current_player(st)
        assert seat >= 0
        is_forced = int(st[S.FORCED])
        for a in buf[: S.legal_actions(st, seat, buf)].tolist():
            child = st.copy()
            assert S.apply_checked(rp, hp, child, seat, a)
            nodes[ply + 1] += 1
            forced[ply + 1] += is_forced
            if child[S.OUT_KIND] >= 0:
                ends[ply + 1] += 1
            stack.append((child, ply + 1))
    return {"nodes": nodes, "ends": ends, "forced": forced}


def _load() -> list[dict[str, Any]]:
    return json.loads(DATA.read_text(encoding="utf-8"))["deals"]


def _deal_id(d: dict[str, Any]) -> str:
    return f"{d['preset']}-seed{d['seed']}-dealer{d['dealer']}-d{d['depth']}"


def _args(d: dict[str, Any]) -> tuple[RuleSet, list[int], int, int]:
    return find_rules(d["preset"]), parse_cards(d["deck"]), d["dealer"], d["depth"]


def _expected(d: dict[str, Any]) -> Counts:
    return {k: d[k] for k in ("nodes", "ends", "forced")}


DATA_DEALS = _load() if DATA.exists() else []  # (absent only before a first --regen)


def test_data_covers_the_deals() -> None:
    """The data holds the deals listed here, each deck the one its seed derives."""
    assert [(d["preset"], d["seed"], d["dealer"], d["depth"]) for d in DATA_DEALS] == DEALS
    for d in DATA_DEALS:
        assert parse_cards(d["deck"]) == list(shuffle_deck(d["seed"])), _deal_id(d)
        assert len(d["nodes"]) == len(d["ends"]) == len(d["forced"]) == d["depth"] + 1


@pytest.mark.parametrize("deal", DATA_DEALS, ids=_deal_id)
def test_perft_reference(deal: dict[str, Any]) -> None:
    assert perft_reference(*_args(deal)) == _expected(deal)


@pytest.mark.parametrize("deal", DATA_DEALS, ids=_deal_id)
def test_perft_fast(deal: dict[str, Any]) -> None:
    assert perft_fast(*_args(deal)) == _expected(deal)


def _regen(write: bool) -> None:
    deals = []
    for preset, seed, dealer, depth in DEALS:
        deck = list(shuffle_deck(seed))
        row: dict[str, Any] = {
            "preset": preset,
            "seed": seed,
            "dealer": dealer,
            "depth": depth,
            "deck": format_cards(deck),
        }
        t = time.perf_counter()
        counts = perft_reference(find_rules(preset), deck, dealer, depth)
        t_ref = time.perf_counter() - t
        perft_fast(find_rules(preset), deck, dealer, 1)  # load the kernels outside the timing
        t = time.perf_counter()
        fast = perft_fast(find_rules(preset), deck, dealer, depth)
        t_fast = time.perf_counter() - t
        row.update(counts)
        deals.append(row)
        same = "same" if fast == counts else f"DIFFERENT: fast {fast}"
        print(
            f"{preset} seed {seed} dealer {dealer} depth {depth}: {counts}"
            f" reference {t_ref:.2f} s, fast {t_fast:.2f} s ({same})"
        )
    if write:
        about = (
            "perft-like counts from fixed deals (tests/engine/test_perft.py): per depth k, the"
            " legal decision sequences of length k (nodes), those that end the hand (ends),"
            " those whose last decision is compulsory (forced)"
        )
        # one line per deal, so a change of counts is a one-line diff
        rows = ",\n  ".join(json.dumps(r, ensure_ascii=False) for r in deals)
        text = f'{{\n "about": {json.dumps(about)},\n "deals": [\n  {rows}\n ]\n}}\n'
        assert json.loads(text)["deals"] == deals
        DATA.write_text(text, encoding="utf-8")
        print(f"wrote {DATA}")


if __name__ == "__main__":
    _regen("--regen" in sys.argv[1:])
