"""The compiled session loop (engine.fast.play.play_sessions) against the runner's
``play_sessions`` + ``ShardRecorder``: same decks (compiled shuffle), dealers (rotation after
荒庄, the winner deals), duplicate rotations, hand ids and every event and outcome column."""

from __future__ import annotations

import numpy as np
import pytest

from engine.deck import derive_seed, shuffle_deck
from engine.fast.deck import shuffle_decks
from engine.fast.play import play_sessions
from engine.rules import find_rules

try:
    from replay.record.recorder import ShardRecorder
    from replay.record.shard import play_sessions as ref_play_sessions
    from replay.record.spec import RunSpec
except ImportError:  # before the move of replay/ into subpackages
    from replay.recorder import ShardRecorder  # type: ignore[no-redef]
    from replay.runner import RunSpec  # type: ignore[no-redef]
    from replay.runner import play_sessions as ref_play_sessions  # type: ignore[no-redef]

_HAND_BUF = {
    "hand_id": "h_id",
    "session": "h_session",
    "session_hand": "h_session_hand",
    "rotation": "h_rotation",
    "deal_id": "h_deal",
    "dealer": "h_dealer",
    "huang_streak": "h_streak",
    "outcome": "h_outcome",
    "winner": "h_winner",
    "source": "h_source",
    "hu_card": "h_card",
    "from_seat": "h_from",
    "huxi": "h_huxi",
    "deng": "h_deng",
    "fan": "h_fan",
    "score": "h_score",
    "mingtang": "h_mingtang",
    "zimo": "h_zimo",
    "stock_left": "h_stock",
    "n_events": "h_events",
}
_EVENT_BUF = {
    "hand": "e_hand",
    "seq": "e_seq",
    "seat": "e_seat",
    "action": "e_action",
    "kind": "e_kind",
    "card": "e_card",
    "from_seat": "e_from",
    "forced": "e_forced",
    "n_legal": "e_n_legal",
    "options": "e_options",
}


@pytest.mark.parametrize(
    ("preset", "duplicate", "deals", "session_length", "sessions"),
    [
        ("hunan", False, 90, 8, range(1, 12)),
        ("hunan", True, 40, 5, range(0, 8)),
        ("hunan-4p", True, 24, 6, range(0, 4)),
        ("luzhou", False, 60, 20, range(0, 3)),
        ("hunan:huangzhuang_rotate=1", False, 40, 10, range(0, 4)),
        ("hunan-4p:huangzhuang_rotate=2", True, 16, 8, range(0, 2)),
    ],
)
def test_sessions_equal_runner(
    preset: str, duplicate: bool, deals: int, session_length: int, sessions: range
) -> None:
    name, _, override = preset.partition(":")
    rules = find_rules(name).with_overrides([override] if override else [])
    n = rules.players
    spec = RunSpec(
        rules=rules,
        policies=("random", "greedy", "heuristic", "random")[:n] if duplicate else ("random",) * n,
        seed=4242,
        deals=deals,
        session_length=session_length,
        duplicate=duplicate,
    )
    rec = ShardRecorder(rules)
    ref_play_sessions(spec, sessions, rec, None)
    ev, hands = play_sessions(spec, sessions)
    for k, buf in _HAND_BUF.items():
        ref = np.array(getattr(rec, buf), dtype=np.int64)
        got = hands[k].astype(np.int64)
        d = np.nonzero(ref != got)[0] if len(ref) == len(got) else [0]
        assert not len(d), f"hand column {k}: first difference at row {d[0]}"
    for s in range(4):
        assert (np.array(rec.h_delta[s]) == hands[f"delta_{s}"]).all(), s
    assert bytes(rec.h_deck) == hands["deck"].tobytes()
    for k, buf in _EVENT_BUF.items():
        ref = np.array(getattr(rec, buf), dtype=np.int64)
        got = ev[k].astype(np.int64)
        assert len(ref) == len(got), k
        d = np.nonzero(ref != got)[0]
        assert not len(d), f"event column {k}: first difference at row {d[0]} (hand {ref[0]})"


def test_shuffle_kernel_equals_reference() -> None:
    seeds = [0, 1, 2**63, 2**64 - 1] + [derive_seed(9, "deal", d) for d in range(300)]
    decks = shuffle_decks(np.array(seeds, dtype=np.uint64))
    for i, s in enumerate(seeds):
        assert tuple(int(k) for k in decks[i]) == shuffle_deck(s)
