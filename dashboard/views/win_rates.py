"""Win rates: by seat, dealer vs non-dealer, by policy; paired policy differences over
duplicate deals; how the win rate converges as hands accumulate."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, ui
from dashboard.charts import field, tip
from dashboard.queries import stats as q
from dashboard.services import filters as fsvc
from dashboard.services import stats as svc

state, f = ui.start(
    "Win rates",
    "Seat-level: one observation per playing seat per hand. Win rate = share of seat-hands"
    " won; score = mean score change per seat-hand.",
)
sig = state.signature

# One policy in the selection: its table is the whole selection (the cheaper "all" group).
played = sorted({p for r in state.usable_runs if r.name in f.runs for p in r.policies})
played = [p for p in played if not f.policies or p in f.policies]
by_policy = "policy" if len(played) > 1 else "all"
with ui.guard():
    groups = q.group_rates_by(sig, f, ("seat", "dealer", by_policy))
    paired = svc.paired_rows(q.paired(sig, f)) if f.duplicate != () else []
seat = svc.group_rows(groups[groups["g"] == "seat"])
dealer = svc.group_rows(groups[groups["g"] == "dealer"])
policy = svc.group_rows(groups[groups["g"] == by_policy])
if by_policy == "all" and played:
    policy = [svc.relabel(g, played[0]) for g in policy]

# one above the other, not side by side: a half-width column squeezed the tables
st.subheader("By seat")
t = svc.rate_table(seat, "seat")
ui.rate_chart(t, "seat", "win rate")
ui.table(t, "win-rate-by-seat")
st.subheader("Dealer vs non-dealer")
t = svc.rate_table(dealer, "seat role")
ui.rate_chart(t, "seat role", "win rate")
ui.table(t, "win-rate-dealer")
ui.drill_link("Hands won by the dealer", "dealer_win")

st.subheader("By policy")
t = svc.rate_table(policy, "policy")
ui.rate_chart(t, "policy", "win rate")
ui.table(t, "win-rate-by-policy")

st.subheader("Paired policy differences (--duplicate runs)")
if paired:
    st.caption(
        "Each duplicate deal is played once per rotation of the policies over the seats, so"
        " policy a and policy b meet the same cards; the difference per deal removes the"
        " deal's luck. Normal interval over deals."
    )
    ui.table(svc.paired_table(paired), "paired-differences")
else:
    st.info(
        "No --duplicate run with two or more policies in the selection: paired differences"
        " need one (`paohuzi simulate --duplicate --policies a,b,c`)."
    )

st.subheader("Convergence")
key = "policy" if len(policy) > 1 else "seat"
width = fsvc.convergence_width(state, f)
with ui.guard():
    curve = svc.convergence_curve(q.convergence(sig, f, key, width), width)
st.caption(
    f"Cumulative win rate by {key} as hands accumulate (bins of {width:,} hands per run),"
    " with its 95 % Wilson band: the band narrows like 1/√n."
)
if not curve.empty:
    tips = [tip("key:N"), tip("hands:Q"), tip("seat_hands:Q")]
    tips += [tip(f"{c}:Q", ".2%") for c in ("rate", "lo", "hi")]
    spec = charts.band_line(
        field("hands:Q", title="hands played (per run)"),
        "rate:Q",
        "cumulative win rate",
        charts.colour("key:N", title=key),
        tips,
    )
    ui.chart(curve, spec)
