"""Replay: step through one recorded hand from any seat's view (or all), with the legal
options at each decision, the one taken, and the final decomposition and settlement.

URL parameters (from a drill-down or a shared link): ``run``, ``hand``, ``step`` or
``at=decisive``, ``seat`` (``all`` or a number).

Below the hand, its decision review (``dashboard.services.review``): the seats under review
(the viewed seat, or all), a win-probability graph over the steps with markers on
inaccuracies, mistakes and blunders (a click on a point goes to that step), the option bars
at this step and the costliest decisions — from a stored review when there is one, else
computed on request (at most ``MAX_PAGE_ROLLOUTS`` rollouts per option) and kept for the
session. The replay itself is ``replay.replayer.hand``
(``load_hand``, ``replay_hand``) and ``replay.replayer.views.state_view``.

A link is checked against the store first (``services.links``): one that names no hand of it
is a message, and no hand is shown in its place.
"""

from __future__ import annotations

import streamlit as st

from dashboard import db, ui
from dashboard.queries import hands as qh
from dashboard.services import links
from dashboard.services import replay as rsvc
from engine.errors import PaohuziError
from replay.store.layout import StoreError

state, f = ui.start("Replay", "Step through a recorded hand, card by card.", pools=False)
sig = state.signature
runs = [r for r in state.usable_runs if r.name in f.runs] or list(state.usable_runs)
names = [r.name for r in runs]
all_names = [r.name for r in state.usable_runs]

# --- URL parameters, applied once per distinct set ------------------------------------------
# A link naming no hand of the store (an unknown run, a hand id beyond the run, a hand that
# is not a whole number ≥ 0, a seat the table does not have) is a message and nothing else:
# never another hand shown in its place.


def _clear_link() -> None:
    for k in links.PARAMS:  # the sidebar's selection stays in the URL
        if k in st.query_params:
            del st.query_params[k]
    st.session_state.pop("_rp_applied", None)


def _bad_link(e: links.BadLink) -> None:
    st.error(f"{e} Nothing is shown for this link.")
    st.button("Clear the link and pick a hand", on_click=_clear_link, key="rp_clear_link")
    st.stop()


qp = {k: v for k, v in st.query_params.to_dict().items() if k in links.PARAMS}
qp_key = tuple(qp.get(k) for k in links.PARAMS)
link: links.ReplayLink | None = None
if qp and st.session_state.get("_rp_applied") != qp_key:
    current = st.session_state.get("rp_run")
    try:
        link = links.parse_link(
            qp,
            {r.name: (r.hands if r.usable else 0, r.players, r.problem) for r in state.runs},
            current if current in all_names else names[0],
        )
    except links.BadLink as e:
        _bad_link(e)
    assert link is not None
    if link.step is not None:
        try:
            links.check_step(link, qh.hand_log(state.root, sig, link.run, link.hand).n_steps)
        except links.BadLink as e:
            _bad_link(e)
        except (PaohuziError, StoreError, OSError):
            pass  # the same error is shown below, where the hand is loaded
    if link.run not in names:
        names = all_names
    st.session_state["rp_run"] = link.run
    st.session_state["rp_hand"] = link.hand
    st.session_state["rp_seat"] = link.seat
    if link.decisive:
        st.session_state["_rp_pending"] = "decisive"
    elif link.event is not None:
        st.session_state["_rp_pending"] = f"at:{link.event}"
    elif link.step is not None:
        st.session_state["_rp_pending"] = link.step

if st.session_state.get("rp_run") not in names:
    st.session_state["rp_run"] = names[0]

c = st.columns([3, 1, 2])
run = c[0].selectbox("run", names, key="rp_run")
info = state.run(run)
assert info is not None
last_hand = max(0, info.hands - 1)
if not 0 <= int(st.session_state.get("rp_hand", 0)) <= last_hand:
    st.session_state["rp_hand"] = 0
hand = int(c[1].number_input("hand", min_value=0, max_value=last_hand, step=1, key="rp_hand"))
seat_options: list[object] = ["all", *range(info.players)]
if st.session_state.get("rp_seat") not in seat_options:
    st.session_state["rp_seat"] = "all"
seat_choice = c[2].selectbox(
    "view of",
    seat_options,
    key="rp_seat",
    format_func=lambda s: "all seats (every hand shown)" if s == "all" else f"seat {s}",
)
seat = None if seat_choice == "all" else int(seat_choice)  # type: ignore[call-overload]

try:
    log = qh.hand_log(state.root, sig, run, hand)
except (PaohuziError, StoreError, OSError) as e:
    st.error(db.redact(f"Cannot load run {run} hand {hand}: {e}"))
    st.stop()

n = log.n_steps
if link is not None:
    st.session_state["_rp_applied"] = qp_key  # the link is good: applied once
pending = st.session_state.pop("_rp_pending", None)
if pending == "decisive":
    st.session_state["rp_step"] = rsvc.decisive_step(log)
elif isinstance(pending, str) and pending.startswith("at:"):
    st.session_state["rp_step"] = rsvc.event_step(log, pending.removeprefix("at:"))
elif isinstance(pending, int):
    st.session_state["rp_step"] = pending
st.session_state["rp_step"] = min(max(0, int(st.session_state.get("rp_step", 0))), n)
st.session_state["_rp_n"] = n
st.session_state["_rp_decisive"] = rsvc.decisive_step(log)


def _go(to: str) -> None:
    s, last = int(st.session_state.get("rp_step", 0)), int(st.session_state.get("_rp_n", 0))
    st.session_state["rp_step"] = {
        "start": 0,
        "back": max(0, s - 1),
        "forward": min(last, s + 1),
        "end": last,
        "decisive": int(st.session_state.get("_rp_decisive", last)),
    }[to]


def _to_step(k: int) -> None:
    st.session_state["rp_step"] = int(k)


#: The review's rollouts per option when the hand has no stored review.
PAGE_ROLLOUTS = 64


def _review_section(run: str, hand: int, step: int, seat: int | None, players: int) -> None:
    """The decision review of the hand: the win-probability graph of the seats under review
    (a click on a point goes to that step), the option bars at this step, the costliest
    decisions. From a stored review (``paohuzi review``) when there is one, else computed on
    request within the page's budget and kept for the session (nothing is written)."""
    from dashboard import charts
    from dashboard.queries import review as qr
    from dashboard.services import review as rv
    from replay.store.reviews import Key

    st.subheader("Review")
    c = st.columns([3, 1, 2, 1])
    default = [seat] if seat is not None else list(range(players))
    if "rv_seats" not in st.session_state or any(
        x >= players for x in st.session_state["rv_seats"]
    ):
        st.session_state["rv_seats"] = default
    chosen = c[0].multiselect("seats under review", list(range(players)), key="rv_seats",
                              format_func=lambda s: f"seat {s}")  # fmt: skip
    if st.session_state.get("_rv_key_for") != (run, hand):  # a new hand: its stored review
        st.session_state["_rv_key_for"] = (run, hand)
        keys = qr.stored_keys(state.root, sig, run, hand)
        if keys:
            st.session_state["rv_rollouts"] = keys[0].rollouts
            st.session_state["rv_policy"] = keys[0].rollout_policy
            st.session_state["rv_seed"] = keys[0].seed
    st.session_state.setdefault("rv_rollouts", PAGE_ROLLOUTS)
    st.session_state.setdefault("rv_seed", 0)
    rollouts = int(c[1].number_input("rollouts per option", min_value=1, max_value=100_000,
                                     step=16, key="rv_rollouts"))  # fmt: skip
    policy = c[2].selectbox("rollout policy", rv.ROLLOUT_POLICIES, key="rv_policy")
    seed = int(c[3].number_input("seed", min_value=0, step=1, key="rv_seed"))
    seats = tuple(sorted(chosen))
    if not seats:
        st.caption("Choose a seat to review.")
        return
    key = Key(rollouts, str(policy), seed)
    cache_key = (run, hand, seats, key)
    review, warnings = qr.stored_hand_review(state.root, sig, run, hand, seats, key)
    for w in warnings:
        st.warning(db.redact(w))
    if review is None:
        review = st.session_state.get("_rv_done", {}).get(cache_key)
    if review is None:
        why = rv.check_budget(rollouts)
        if why:
            st.error(why)
            return
        st.caption(
            f"No stored review of {', '.join(f'seat {s}' for s in seats)} of this hand with"
            f" {rollouts} rollouts per option by {policy}, seed {seed}"
            f" (`paohuzi review {run} {hand}` stores one)."
        )
        if not st.button("Review this hand", icon=":material/analytics:", key="rv_go"):
            return
        bar = st.progress(0.0, text="reviewing…")

        def progress(done: int, total: int) -> None:
            bar.progress(done / max(1, total), text=f"reviewing… decision {done} of {total}")

        try:
            review = rv.compute_review(qh.hand_log(state.root, sig, run, hand), seats, key,
                                       progress)  # fmt: skip
        except (PaohuziError, ValueError) as e:
            st.error(db.redact(str(e)))
            return
        bar.empty()
        st.session_state.setdefault("_rv_done", {})[cache_key] = review
    st.caption(rv.summary_line(review))
    if not review.decisions:
        return
    curve = rv.curve_frame(review)
    n_pick = int(st.session_state.get("_rv_pick", 0))
    event = ui.chart(curve, charts.win_curve(st.session_state.get("_rp_n", 0)),
                     on_select="rerun", key=f"rv_curve_{n_pick}")  # fmt: skip
    picked = (dict(event.selection or {}) if event else {}).get("pick")
    if picked and picked[0].get("step") is not None:
        st.session_state["_rp_pending"] = int(picked[0]["step"])
        st.session_state["_rv_pick"] = n_pick + 1  # a fresh graph: the click is used once
        st.rerun()
    bars = rv.options_frame(review, step)
    if bars is not None:
        st.markdown(
            f"**Options at step {step}** (seat {int(bars['seat'].iloc[0])}, 95 % intervals)"
        )
        left, right = st.columns(2)
        with left:
            ui.chart(bars, charts.option_bars("win", "win chance (%)"), key="rv_bars_win")
        with right:
            ui.chart(bars, charts.option_bars("score", "mean score change"), key="rv_bars_score")
    costly = rv.costliest(review)
    if costly:
        st.markdown(rv.COSTLIEST_HEADING)
        cols = st.columns(len(costly))
        for col, d in zip(cols, costly):
            label = (f"step {d['step']} · seat {d['seat']}: {d['verdict']}"
                     f"{' · ' + d['class'] if d['class'] else ''}")  # fmt: skip
            col.button(label, key=f"rv_costly_{d['step']}", on_click=_to_step, args=(d["step"],),
                       width="stretch")  # fmt: skip


b = st.columns(6)
b[0].button("start", icon=":material/first_page:", on_click=_go, args=("start",), width="stretch")
b[1].button("back", icon=":material/chevron_left:", on_click=_go, args=("back",), width="stretch")
b[2].button(
    "forward", icon=":material/chevron_right:", on_click=_go, args=("forward",), width="stretch"
)
b[3].button("end", icon=":material/last_page:", on_click=_go, args=("end",), width="stretch")
b[4].button(
    "decisive step", icon=":material/star:", on_click=_go, args=("decisive",), width="stretch"
)
if n > 0:
    step = int(st.slider("step", min_value=0, max_value=n, key="rp_step"))
else:
    step = 0
    st.caption("This hand has no decisions (a 3提/5坎 天胡 at the deal).")

try:
    view = rsvc.view_at(log, step, seat)
except PaohuziError as e:
    st.error(db.redact(f"The log of run {run} hand {hand} does not replay: {e}"))
    st.stop()

for k, v in {"run": run, "hand": str(hand), "step": str(step), "seat": str(seat_choice)}.items():
    ui.param_out(k, v)
ui.param_out("at", None)  # the step is in the URL now
st.session_state["_rp_applied"] = (run, str(hand), str(step), None, str(seat_choice))

st.markdown(f"**{rsvc.step_caption(view)}** · rules {view['rules']} · dealer seat {view['dealer']}")
ui.card_table(view)

decision = view.get("decision")
if decision:
    st.subheader("Decision")
    chosen = decision.get("chosen") or {}
    if chosen.get("text"):
        st.markdown(f"Taken: seat {chosen['seat']} **{chosen['text']}**")
    elif chosen.get("hidden"):
        who = "a seat" if chosen.get("seat") is None else f"seat {chosen['seat']}"
        st.markdown(f"Taken: {who} (hidden from this view)")
    ui.table(rsvc.options_frame(view), "replay-options", hide=())

_review_section(run, hand, step, seat, info.players)

ui.hand_result(view)
