"""荒庄: how often the stock runs out, by rules and policies; the share of hands still in
play against the cards left in the stock; the dealer-retention effect."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, ui
from dashboard.charts import field, tip
from dashboard.queries import stats as q
from dashboard.services import stats as svc

state, f = ui.start(
    "荒庄",
    "A 荒庄 ends the hand when a draw is needed and the stock is empty; the dealer keeps the"
    " deal until the rules' n-th consecutive 荒庄.",
)
sig = state.signature

with ui.guard():
    by = q.huang_by_keys(sig, f, ("all", "rules", "policies", "players"))
overall = svc.huang_table(by[by["g"] == "all"], "selection")
by_rules = svc.huang_table(by[by["g"] == "rules"], "rules")
by_pol = svc.huang_table(by[by["g"] == "policies"], "policy mix")
by_players = svc.huang_table(by[by["g"] == "players"], "table")

if not overall.empty:
    r = overall.iloc[0]
    c = st.columns(3)
    c[0].metric("荒庄 rate", r["荒庄 rate"], help=f"95 % interval {r['95 % interval']}")
    c[0].caption(f"95 %: {r['95 % interval']} · n = {int(r['hands']):,} hands")
    c[1].metric("荒庄 hands", f"{round(r['p'] * r['hands']):,}")
    c[2].metric("荒庄 keeping the dealer", f"{int(r['荒庄 keeping the dealer']):,}")
    cols = st.columns(2)
    with cols[0]:
        ui.drill_link("荒庄 with the dealer retained", "huang_retained")
    with cols[1]:
        ui.drill_link("All 荒庄 hands", "huang")

# one above the other, not side by side: a half-width column cut the tables' numbers off
st.subheader("By rules")
ui.rate_chart(by_rules, "rules", "荒庄 rate")
ui.table(by_rules, "huangzhuang-by-rules")
st.subheader("By policy mix")
ui.rate_chart(by_pol, "policy mix", "荒庄 rate")
ui.table(by_pol, "huangzhuang-by-policy-mix")
if len(by_players) > 1:
    st.subheader("3 vs 4 players")
    ui.table(by_players, "huangzhuang-by-players")

st.subheader("Survival: hands still in play against the cards left in the stock")
ui.keep("huang_curve_key")  # kept when the user comes back to the page
ui.param_in("curve", "huang_curve_key", ["rules", "policies", "run"])  # and in the URL
key = st.radio(
    "one curve per", ["rules", "policies", "run"], horizontal=True, key="huang_curve_key"
)
ui.param_out("curve", key)
with ui.guard():
    curve = svc.survival_curve(q.survival(sig, f, key))
st.caption(
    "Share of hands not yet over when the stock is down to s cards (a hand that ended with e"
    " cards left was in play at every s ≥ e); at s = 0 what is left are the 荒庄 and the wins"
    " on the last card (海底). Band: 95 % Wilson."
)
if not curve.empty:
    spec = charts.band_line(
        field("stock_left:Q", title="cards left in the stock", scale={"reverse": True}),
        "share:Q",
        "share of hands in play",
        charts.colour("key:N", title=key),
        [tip("key:N"), tip("stock_left:Q"), tip("share:Q", ".2%"), tip("hands:Q")],
        points=True,
    )
    ui.chart(curve, spec)

st.subheader("Dealer retention")
with ui.guard():
    ret = q.retention(sig, f)
table = svc.retention_table(ret)
if not table.empty:
    kept, fresh, diff = svc.retention_effect(ret)
    c = st.columns(3)
    c[0].metric("dealer win rate after a 荒庄 kept him", svc.fmt_rate(kept))
    c[0].caption(f"95 %: {svc.fmt_interval(kept)} · n = {kept.n:,} hands")
    c[1].metric("dealer win rate otherwise", svc.fmt_rate(fresh))
    c[1].caption(f"95 %: {svc.fmt_interval(fresh)} · n = {fresh.n:,} hands")
    c[2].metric(
        "difference",
        "–" if diff.mean != diff.mean else f"{100 * diff.mean:+.2f} pp",
    )
    c[2].caption(
        "95 %: –"
        if diff.lo != diff.lo
        else f"95 %: {100 * diff.lo:+.2f} – {100 * diff.hi:+.2f} pp (Newcombe)"
    )
    ui.table(table, "dealer-retention", hide=("streak", "p_dealer", "lo_dealer", "hi_dealer"))
    ui.drill_link("Hands dealt by a dealer kept after 荒庄", "retained_dealer")
