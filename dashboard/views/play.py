"""Play: a hand against the bots, the same flow as ``paohuzi play`` — the deal, your seat's
view of the table with your options as buttons, the bots' moves since your last one, then the
hand recorded (verified, into a run of played hands), compared on the same deal with bots in
your seat, and your decisions reviewed, each linking into the Replay page at its step.

The page writes into the store, so it plays only in a dashboard started with
``paohuzi dashboard --play``; otherwise it says how, and the dashboard stays read-only. The
table is the journal ``DATA/play/TABLE.jsonl`` (:mod:`replay.play.table`): every choice is on
disk before the hand goes on, so a closed tab or a restarted server loses nothing — the table
is listed under "Unfinished hands" (here, and for ``paohuzi play --resume``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from dashboard import db, ui
from dashboard.services import play as psvc
from engine.errors import PaohuziError

TITLE = "Play"
CAPTION = "A hand against the bots: recorded as you play it, then compared and reviewed."
if not psvc.enabled():
    ui.start(TITLE, CAPTION, need_runs=False, pools=False)  # the store's notes, as on every page
    st.info(
        "This page writes the hands you play into the store, so it is off in a read-only"
        " dashboard. Start the dashboard with `paohuzi dashboard --play` (and the same"
        " `--data`) to play here, or play in the terminal with `paohuzi play`."
    )
    st.stop()
st.title(TITLE)
st.caption(CAPTION)  # a missing or empty store is no error here: the first hand makes it
try:
    root = Path(db.store_state().root)
except OSError as e:
    st.error(db.redact(f"Cannot read the store: {e}"))
    st.stop()


def _memo(path: str) -> Any:
    from replay.play.table import BotMemo

    memos = st.session_state.setdefault("_pl_memos", {})
    return memos.setdefault(path, BotMemo())


def _sit(path: str, bots: list[str]) -> None:
    st.session_state["pl_table"] = path
    st.session_state["pl_bots"] = bots
    st.session_state.pop("pl_done", None)


def _resume(path: str, preset: str) -> None:
    """Go on with an unfinished table, compared after it with the default bots (loaded on
    the click, not for every table listed)."""
    from replay.play.table import bots_to_compare

    _sit(path, bots_to_compare(None, preset))


def _leave() -> None:
    for k in ("pl_table", "pl_bots", "pl_done", "pl_view"):
        st.session_state.pop(k, None)


def _choose(path: str, seen: int, action: int) -> None:
    why = psvc.choose(Path(path), seen, action, _memo(path))
    if why is not None:
        st.session_state["_pl_note"] = why


def _setup() -> None:
    """The form for a new hand, and the unfinished hands to go on with."""
    from engine.rules import PRESETS
    from replay.play.table import (
        DEFAULT_OPPONENTS,
        DEFAULT_RUN,
        Journal,
        bots_to_compare,
        check_run,
        new_deal,
        open_tables,
    )  # fmt: skip

    with st.form("pl_new"):
        c = st.columns([2, 1, 3, 2])
        preset = c[0].selectbox("rules", list(PRESETS), key="pl_preset")
        seat = int(c[1].number_input("your seat", 0, 3, 0, key="pl_seat"))
        opponents = c[2].text_input("bots, in seat order after yours", DEFAULT_OPPONENTS,
                                    key="pl_opponents")  # fmt: skip
        name = c[3].text_input("your name", "player", key="pl_name")
        c = st.columns([2, 1, 3, 2])
        seed_text = c[0].text_input("seed (empty: a new deal)", "", key="pl_seed")
        daily = c[1].checkbox("deal of the day", key="pl_daily")
        compare = c[2].text_input("compare with (empty: the defaults; none: no comparison)",
                                  "", key="pl_compare")  # fmt: skip
        run = c[3].text_input("run", DEFAULT_RUN, key="pl_run")
        go = st.form_submit_button("Deal", icon=":material/playing_cards:")
    if go:
        try:
            seed = int(seed_text) if seed_text.strip() else None
        except ValueError:
            st.error(f"seed {seed_text!r}: a whole number, or empty for a new deal")
            return
        try:
            bots = bots_to_compare(compare.strip() or None, str(preset))
            deal = new_deal(str(preset), (), seat, opponents, seed, daily, run.strip(), name)
            check_run(root, deal)
            journal = Journal.create(root, deal)
        except (PaohuziError, ValueError, OSError) as e:
            st.error(db.redact(str(e)))
            return
        _sit(str(journal.path), bots)
        st.rerun()
    tables = open_tables(root)
    if tables:
        st.subheader("Unfinished hands")
        for t in tables[-10:]:
            try:
                j = Journal.open(t)
            except PaohuziError as e:
                st.caption(db.redact(str(e)))
                continue
            label = (f"go on with {j.deal.player}'s hand ({j.deal.preset}, {j.deal.seed_text},"
                     f" {len(j.decisions)} decisions made)")  # fmt: skip
            st.button(label, key=f"pl_resume_{t.name}", on_click=_resume,
                      args=(str(t), j.deal.preset))  # fmt: skip


def _table(path: str) -> None:
    """The hand in play: the bots' moves, your view, your options; at the end, the record."""
    from replay.play.table import Journal
    from replay.replayer.views import state_view

    if not Path(path).exists():  # finished meanwhile (another tab, or a run cut short here)
        st.info("This hand is finished and recorded: find it in the Replay page.")
        st.button("Play another hand", on_click=_leave, key="pl_leave_gone")
        return
    try:
        journal = Journal.open(Path(path))
        turn = psvc.advance(journal, _memo(path))
    except (PaohuziError, OSError) as e:
        st.error(db.redact(f"{e}"))
        st.button("Leave this table", on_click=_leave, key="pl_leave_bad")
        return
    deal = journal.deal
    st.markdown(
        f"**{deal.preset}** · {deal.seed_text} · you are seat {deal.human} ("
        f"{deal.player}) · "
        + " · ".join(
            f"seat {i}: {s}" for i, s in enumerate(deal.seats) if i != deal.human
        )  # fmt: skip
    )
    moves = psvc.move_lines(turn.since, deal.seats, deal.human)
    if moves:
        st.markdown("**Since your last move**")
        st.code("\n".join(moves), language=None)
    if turn.over:
        view = state_view(turn.state, None)
        with st.spinner("storing the hand, playing the same deal with the bots, reviewing…"):
            try:
                done = psvc.finish(root, journal, turn, list(st.session_state.get("pl_bots", [])))
            except (PaohuziError, OSError) as e:  # not stored: the table is kept, to try again
                st.error(db.redact(str(e)))
                return
        st.session_state["pl_done"] = done
        st.session_state["pl_view"] = view
        st.session_state.pop("pl_table", None)
        st.rerun()
    note = st.session_state.pop("_pl_note", None)
    if note:
        st.warning(note)
    st.subheader("Your move")
    labels = psvc.option_labels(turn.legal)
    cols = st.columns(min(6, len(labels)))
    for i, (label, action) in enumerate(zip(labels, turn.legal)):
        cols[i % len(cols)].button(
            label, key=f"pl_opt_{len(journal.decisions)}_{i}", on_click=_choose,
            args=(path, len(journal.decisions), action), width="stretch",
        )  # fmt: skip
    ui.card_table(state_view(turn.state, deal.human))


def _done(done: Any, view: dict[str, Any]) -> None:
    """After the hand: where it is stored, the comparison, the review, links to the steps."""
    st.success(f"Stored as run {done.run} hand {done.hand} (seat {done.seat}).")
    if done.revealed:
        st.caption(done.revealed)
    if done.problem:
        st.warning(db.redact(done.problem))
    if done.comparison is not None:
        st.markdown(f"**{done.comparison.line(done.score)}**")
    st.page_link(
        ui.PAGE_FILES["replay"],
        label="the whole hand in the Replay page",
        icon=":material/play_circle:",
        query_params={
            "run": done.run,
            "hand": str(done.hand),
            "step": "0",
            "seat": str(done.seat),
        },  # fmt: skip
    )
    from dashboard.services import review as rv

    st.subheader("Your decisions, reviewed")
    if done.review is None:
        st.caption(f"Not reviewed: `paohuzi review {done.run} {done.hand} --seat {done.seat}`.")
    else:
        st.markdown(rv.summary_line(done.review, "stored with the hand"))
        costly = rv.costliest(done.review)
        if costly:
            st.markdown(rv.COSTLIEST_HEADING)
        for d in costly:
            st.page_link(
                ui.PAGE_FILES["replay"],
                label=(
                    f"step {d['step']}: you {d['verdict']}"
                    f"{' · ' + d['class'] if d['class'] else ''}"
                ),  # fmt: skip
                icon=":material/analytics:",
                query_params={
                    "run": done.run,
                    "hand": str(done.hand),
                    "step": str(d["step"]),
                    "seat": str(done.seat),
                },  # fmt: skip
            )
    st.button("Play another hand", on_click=_leave, key="pl_again", icon=":material/replay:")
    ui.card_table(view)
    ui.hand_result(view)


if st.session_state.get("pl_done") is not None:
    _done(st.session_state["pl_done"], st.session_state.get("pl_view") or {})
elif st.session_state.get("pl_table"):
    _table(str(st.session_state["pl_table"]))
else:
    _setup()
