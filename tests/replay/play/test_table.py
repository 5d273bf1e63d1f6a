"""A hand played by a person (replay.play.table): journalled decision by decision, resumed
from the journal, recorded as a verified imported hand; the person's view shows no hidden
card."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import InvalidNotation
from engine.state import Game
from replay.play.table import (
    BotMemo,
    Deal,
    Journal,
    TableError,
    advance,
    open_tables,
    play,
    record,
)  # fmt: skip
from replay.replayer.views import SeenMoves, state_view

SEATS = ("human:ann", "heuristic", "greedy")


def _first(state: object, seat: int, legal: list[int]) -> int:
    return legal[-1]


def _finish(journal: Journal) -> object:
    final = None
    for step, *_ in play(journal, _first):
        final = step.state
    return final


def test_a_hand_is_journalled_then_stored_and_the_table_removed(tmp_path: Path) -> None:
    deal = Deal.new("hunan", (), 0, SEATS, seed=7)
    journal = Journal.create(tmp_path, deal)
    final = _finish(journal)
    lines = journal.path.read_text().splitlines()
    assert json.loads(lines[0])["seats"] == list(SEATS) and len(lines) == 1 + len(journal.decisions)
    result = record(tmp_path, journal, final)
    assert result.run == "play" and result.hand_ids == [0]
    assert not journal.path.exists() and open_tables(tmp_path) == []


def test_a_resumed_hand_is_the_hand_played_at_once(tmp_path: Path) -> None:
    deal = Deal.new("hunan", (), 0, SEATS, seed=11)
    whole = Journal.create(tmp_path / "a", deal)
    want = _finish(whole).history  # type: ignore[attr-defined]
    cut = Journal.create(tmp_path / "b", deal)
    asked = []

    def stop_at_the_third(state: object, seat: int, legal: list[int]) -> int:
        asked.append(1)
        if len(asked) == 3:
            raise KeyboardInterrupt
        return legal[-1]

    with pytest.raises(KeyboardInterrupt):
        for _ in play(cut, stop_at_the_third):
            pass
    again = Journal.open(open_tables(tmp_path / "b")[-1])
    assert again.decisions == whole.decisions[:2]
    live = [fresh for _, fresh, _ in play(again, _first)]
    assert live[0] is False and live[-1] is True  # the past replayed, then played on
    assert _finish(Journal.open(again.path)).history == want  # type: ignore[attr-defined]


@pytest.mark.parametrize("seats", [SEATS, ("greedy", "search@3/heuristic", "human:ann")])
def test_a_page_playing_click_by_click_plays_the_hand_played_at_once(
    tmp_path: Path, seats: tuple[str, ...]
) -> None:
    """The Play page plays the hand again from its journal at every click
    (:func:`advance`); with the bots' choices remembered (:class:`BotMemo`: each choice and
    the generator's state after it), the hand is the one :func:`play` plays in one pass, and
    a search bot thinks once per decision, however many clicks there are."""
    human = seats.index("human:ann")
    deal = Deal.new("hunan", (), human, seats, seed=5)
    want = _finish(Journal.create(tmp_path / "a", deal)).history  # type: ignore[attr-defined]
    journal = Journal.create(tmp_path / "b", deal)
    memo = BotMemo()
    calls = 0
    while True:
        turn = advance(journal, memo)
        calls += 1
        if turn.over:
            break
        assert turn.legal and human in turn.state.deciders()
        journal.append(len(turn.state.history), turn.legal[-1])  # what _first plays
    assert turn.state.history == want and calls == len(journal.decisions) + 1
    made = sum(len(v) for v in memo.choices.values())
    bots = [a for s, a in want if seats[s] != "human:ann"]
    assert made <= len(bots)  # each bot choice made once (forced moves ask no one)
    # without the memo, from the journal alone: the same hand
    assert advance(Journal.open(journal.path)).state.history == want


def test_the_moves_shown_between_decisions_are_every_move_the_person_sees(tmp_path: Path) -> None:
    """Over a whole hand played click by click, the moves :func:`advance` shows since each
    decision, put together, are the moves the person sees in one pass
    (:class:`SeenMoves`) but for their own choices: nothing lost at a decision — a bot's
    claim declared before the person's and carried out when the person passed included."""
    from engine.actions import PASS

    shown_claims = 0
    for seed in range(12):
        deal = Deal.new("hunan", (), 0, ("human:ann", "heuristic", "heuristic"), seed=seed)
        journal = Journal.create(tmp_path / str(seed), deal)
        got: list[tuple[int, dict, bool]] = []
        while not (turn := advance(journal)).over:
            got.extend(turn.since)
            pick = PASS if PASS in turn.legal else turn.legal[-1]
            journal.append(len(turn.state.history), pick)
        got.extend(turn.since)
        seen, want = SeenMoves(0), []
        state = Game(deal.rules).new_initial_state(deal.deck, deal.dealer)
        mine = {k for k, _ in journal.decisions}
        for seat, action in turn.state.history:
            state.apply(seat, action)
            step = len(state.history) - 1
            want.extend(m for m in seen.add(state, seat, action, False)
                        if not (m[0] == 0 and step in mine))  # fmt: skip
        assert [(s, v["text"]) for s, v, _ in got] == [(s, v["text"]) for s, v, _ in want]
        shown_claims += sum(1 for s, v, _ in got if s != 0 and v["text"][0] in "吃碰胡")
    assert shown_claims > 0


def test_one_writer_at_a_time_and_one_record_per_table(tmp_path: Path) -> None:
    """Two writers on one table (a tab and a terminal): the second's decision is refused once
    the first has made one; a finished hand is recorded once, the second recorder told so."""
    deal = Deal.new("hunan", (), 0, SEATS, seed=7)
    a = Journal.create(tmp_path, deal)
    b = Journal.open(a.path)
    turn = advance(a)
    a.append(len(turn.state.history), turn.legal[-1])
    with pytest.raises(TableError, match="played on elsewhere"):
        b.append(len(turn.state.history), turn.legal[-1])
    assert len(Journal.open(a.path).decisions) == 1
    final = _finish(a)
    other = Journal.open(a.path)
    record(tmp_path, a, final)
    with pytest.raises(TableError, match="is finished: its hand was recorded"):
        record(tmp_path, other, final)
    from replay.store.runs import open_store

    assert open_store(tmp_path).run("play").manifest["progress"]["hands"] == 1


def test_a_journal_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    deal = Deal.new("hunan", (), 0, SEATS, seed=3)
    j = Journal.create(tmp_path, deal)
    j.append(0, 9999)
    with pytest.raises(TableError, match="does not fit"):
        _finish(Journal.open(j.path))
    j.path.write_text("not json\n")
    with pytest.raises(TableError, match="not a table"):
        Journal.open(j.path)


def test_a_killed_writer_s_last_line_is_dropped(tmp_path: Path) -> None:
    """A decision cut in the middle of its line is lost, and the next one is written on a
    line of its own."""
    j = Journal.create(tmp_path, Deal.new("hunan", (), 0, SEATS, seed=3))
    with open(j.path, "a") as f:
        f.write('{"step": 4, "act')
    again = Journal.open(j.path)
    assert again.decisions == []
    again.append(3, 29)
    assert Journal.open(j.path).decisions == [(3, 29)]


@pytest.mark.parametrize(
    "seats, why",
    [
        (("human:ann", "heuristic"), "2 seats for 3 players"),
        (("human:ann", "human:bob", "greedy"), "exactly one seat"),
        (("human:a b", "greedy", "greedy"), "player name"),
        (("greedy", "greedy", "human:ann", "greedy"), "sits out"),
    ],
)
def test_bad_deals_are_refused(seats: tuple[str, ...], why: str) -> None:
    with pytest.raises(InvalidNotation, match=why):
        Deal.new("hunan-4p" if len(seats) == 4 else "hunan", (), seats.index(next(
            s for s in seats if s.startswith("human:"))), seats, seed=1)  # fmt: skip


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**40),
    seat=st.integers(0, 3),
    preset=st.sampled_from(["hunan", "hunan-4p"]),
)
def test_the_person_never_sees_a_hidden_card(seed: int, seat: int, preset: str) -> None:
    """At every decision of the person's, their view (what the terminal and the Play page
    show) is the same whatever the cards hidden from them: the other hands, the stock and a
    card drawn face down."""
    from engine.rules import find_rules

    players = find_rules(preset).players
    seat = seat % players
    if players == 4 and seat == 2:  # the dealer's opposite sits out (坐醒)
        seat = 3
    seats = ["random"] * players
    seats[seat] = "human:ann"
    deal = Deal.new(preset, (), seat, tuple(seats), seed=seed)
    rng = random.Random(seed)

    def look(state: object, s: int, legal: list[int]) -> int:
        view = state_view(state, s)  # type: ignore[arg-type]
        assert "stock" not in view
        for other in view["seats"]:
            if other["seat"] != s:
                assert set(other["hand"]) == {"hidden", "count"} and other["hand"]["hidden"]
                assert all(g["hidden"] or g["kind"] != "wei" for g in other["melds"])
                assert all(g["cards"] is None for g in other["melds"] if g["hidden"])
        card = view["card"]
        if card is not None and card["hidden"]:
            assert card["card"] is None
        _same_view_whatever_is_hidden(state, s, view, rng.getrandbits(64))
        return rng.choice(list(legal))

    class Memory:
        path = Path("/dev/null")
        decisions: list[tuple[int, int]] = []

        def __init__(self) -> None:
            self.deal, self.decisions = deal, []

        def append(self, step: int, action: int) -> None:
            self.decisions.append((step, action))

    for _ in play(Memory(), look):  # type: ignore[arg-type]
        pass


def _same_view_whatever_is_hidden(state: Any, seat: int, view: dict, seed: int) -> None:
    """Both engines' view of ``seat`` does not change when every card hidden from it is drawn
    again (a determinization): the reference's rendered view, and the compiled engine's
    information set — the unseen copies of each face, the faces shown past their 跑, the card
    on offer as the seat sees it — which also equal the reference's."""
    import numpy as np

    from engine import search as ref
    from engine.fast import search as fast
    from engine.fast.pyrandom import N as MT_N
    from engine.fast.pyrandom import mt_seed64

    other = ref.determinize(state, seat, random.Random(seed))
    assert state_view(other, seat) == view
    rp, hp, st0 = fast.flat_state(state)
    mt = np.zeros(MT_N + 1, dtype=np.int64)
    mt_seed64(mt, np.uint64(seed))
    det = np.empty_like(st0)
    assert fast.determinize(rp, hp, st0, seat, mt, det, ref.MAX_TRIES) >= 1
    assert not np.array_equal(det, st0) or not any(ref.hidden_counts(state, seat))
    seen = []
    for flat in (st0, det):
        counts = np.empty(20, dtype=np.int64)
        fast.hidden_counts(flat, seat, counts)
        seen.append((counts.tolist(), int(fast.revealed_faces(flat, seat)),
                     int(fast._seen_card(flat, seat))))  # fmt: skip
    obs = state.observation(seat)
    card = -1 if obs.card is None else obs.card
    assert (
        seen[0]
        == seen[1]
        == (ref.hidden_counts(state, seat), ref.revealed_faces(state, seat), card)
    )


def test_the_bots_to_compare_are_bounded() -> None:
    """The comparison is kept in the run's manifest, whose schema bounds it: a longer list,
    or a longer spec, is refused before the hand (never a manifest the run cannot read)."""
    from replay.play.table import MAX_COMPARED, bots_to_compare

    assert bots_to_compare("random, greedy", "hunan") == ["random", "greedy"]
    assert bots_to_compare("none", "hunan") == []
    with pytest.raises(InvalidNotation, match=f"at most {MAX_COMPARED}"):
        bots_to_compare(",".join(["random"] * (MAX_COMPARED + 1)), "hunan")
