"""Actions: what players do, from the event log (replay.analysis.event_stats, the numbers of
``paohuzi stats --events``) — per hand 臭胡, 忍碰 and 八块 (each linking to the hands in the
Drill-down page, and from there to the Replay page at the step where it happened), decline
rates, actions per seat-hand (and, for --duplicate runs, the paired differences between
policies), forced share, options per choice, hand length, win timing. Read from the runs'
event summaries (the events table for runs not yet indexed)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import charts, ui
from dashboard.charts import tip
from dashboard.queries import stats as q
from replay.analysis.figures.results import Rate

state, f = ui.start(
    "Actions",
    "What the players did, counted from every recorded decision (declines included), for"
    " the seats and policies of the sidebar; Wilson 95 % intervals on the clusters (the deal"
    " in --duplicate runs).",
    pools=False,  # a row per run
)
sig = state.signature
runs = [r for r in state.usable_runs if r.name in f.runs]
stats = []
with ui.guard():
    for r in runs:
        stats.append(q.event_figures(sig, r.name, tuple(f.seats), tuple(f.policies)))


def _rate_row(label: str, r: Rate, **more: object) -> dict[str, object]:
    return {
        **more,
        "what": label,
        "k": r.k,
        "of": r.n,
        "rate": f"{100 * r.p:.1f} %",
        "95 % CI": f"[{100 * r.lo:.1f}, {100 * r.hi:.1f}]",
        "p": r.p,
        "lo": r.lo,
        "hi": r.hi,
    }


st.subheader("Per hand")
rows = []
for s in stats:
    if not s.hands:
        continue
    for label, rate in (("臭胡 (a 胡 declined)", s.chouhu), ("忍碰 (a 碰 declined)", s.renpeng),
                        ("八块 (a second 跑/提)", s.bakuai)):  # fmt: skip
        rows.append(_rate_row(label, rate, run=s.run))
if not rows:
    st.info("No hand in the selection.")
    st.stop()
per_hand = pd.DataFrame(rows)
ui.table(per_hand, "actions-per-hand")
cols = st.columns(3)
for col, (cond, label) in zip(
    cols,
    (
        ("chouhu", "Hands with a 臭胡"),
        ("renpeng", "Hands with a 忍碰"),
        ("bakuai", "Hands with a 八块"),
    ),
):
    with col:
        ui.drill_link(label, cond)

st.subheader("Declined when offered")
dec = pd.DataFrame(
    [
        _rate_row(f"{s.run} · {d.policy} · {d.offered}", d.declined)
        for s in stats
        for d in s.declines
    ]
)
if not dec.empty:
    ui.rate_chart(dec.rename(columns={"what": "group"}), "group", "passed when offered")
    ui.table(dec, "actions-declined")

st.subheader("Actions per seat-hand")
acts = pd.DataFrame(
    [
        {
            "run": s.run, "policy": a.policy, "kind": a.kind,
            "how": "forced" if a.forced else "chosen", "events": a.events,
            "per seat-hand": round(a.per_seat_hand.mean, 3),
            "95 % CI": f"[{a.per_seat_hand.lo:.3f}, {a.per_seat_hand.hi:.3f}]",
        }
        for s in stats
        for a in s.actions
    ]
)  # fmt: skip
if not acts.empty:
    ui.table(acts, "actions-per-seat-hand", hide=())

paired = pd.DataFrame(
    [
        {
            "run": s.run, "a": x.a, "b": x.b, "kind": x.kind,
            "how": "forced" if x.forced else "chosen", "deals": x.deals,
            "a − b per seat-hand": round(x.diff.mean, 3),
            "95 % CI": f"[{x.diff.lo:.3f}, {x.diff.hi:.3f}]",
        }
        for s in stats
        for x in s.paired
    ]
)  # fmt: skip
if not paired.empty:
    st.subheader("Paired differences over the same deals (--duplicate runs)")
    st.caption(
        "Policy a minus policy b: events of each kind per seat-hand, deal by deal, so the"
        " deal's luck cancels."
    )
    ui.table(paired, "actions-paired", hide=())

st.subheader("Forced share of the decisions")
forced = pd.DataFrame([_rate_row(f"{s.run} · {x.policy}", x.rate) for s in stats for x in s.forced])
if not forced.empty:
    ui.table(forced, "actions-forced")

st.subheader("Options per real choice")
opt_rows = [
    {"group": f"{s.run} · {o.policy}", "v": v, "n": c, "share": c / o.choices}
    for s in stats
    for o in s.options
    for v, c in zip(o.values, o.counts)
]
if opt_rows:
    ui.chart(
        pd.DataFrame(opt_rows),
        charts.grouped_bars(
            "v:Q", "legal options", "group:N", "share of choices",
            [tip("group:N"), tip("v:Q", title="options"), tip("n:Q", title="choices"),
             tip("share:Q", ".1%", "share of choices")],
        ),
    )  # fmt: skip
    st.caption(
        " · ".join(
            f"{s.run} · {o.policy}: mean {o.mean:.2f} over {o.choices:,} choices"
            for s in stats
            for o in s.options
        )  # fmt: skip
    )

st.subheader("Hand length and win timing")
length = pd.DataFrame(
    [
        {"run": s.run, "hands": s.hands, "length in": what, "mean per hand": round(m.mean, 2),
         "95 % CI": f"[{m.lo:.2f}, {m.hi:.2f}]"}
        for s in stats
        for what, m in (("decisions", s.decisions_per_hand), ("draws", s.draws_per_hand))
        if m is not None
    ]
)  # fmt: skip
if not length.empty:
    ui.table(length, "hand-length", hide=())
left, right = st.columns(2)
with left:
    st.caption("decisions per hand")
    rows2 = [
        {"run": s.run, "v": v, "n": c, "share": c / max(1, s.hands)}
        for s in stats
        for v, c in zip(s.decisions.get("values", []), s.decisions.get("counts", []))
    ]
    if rows2:
        ui.chart(
            pd.DataFrame(rows2),
            charts.grouped_bars(
                "v:Q",
                "decisions",
                "run:N",
                "share of hands",
                [tip("run:N"), tip("v:Q", title="decisions"), tip("n:Q", title="hands")],
            ),  # fmt: skip
        )
with right:
    st.caption("wins by cards left in the stock")
    rows3 = [
        {"run": s.run, "v": v, "n": c, "share": c / max(1, sum(s.win_stock["counts"]))}
        for s in stats
        for v, c in zip(s.win_stock.get("values", []), s.win_stock.get("counts", []))
    ]
    if rows3:
        ui.chart(
            pd.DataFrame(rows3),
            charts.grouped_bars(
                "v:Q",
                "stock left at the win",
                "run:N",
                "share of wins",
                [tip("run:N"), tip("v:Q", title="stock left"), tip("n:Q", title="wins")],
            ),  # fmt: skip
        )
