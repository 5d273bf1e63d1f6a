"""胡息 and score: distributions of the winning 胡息, 等, 番 and score; which group types the
胡息 comes from; by 名堂 and by the source of the winning card."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import charts, ui
from dashboard.charts import tip
from dashboard.queries import hands as qh
from dashboard.queries import stats as q
from dashboard.services import huxi
from dashboard.services import stats as svc

state, f = ui.start(
    "胡息 and score",
    "Over the winning hands of the selection (won by the chosen seats and policies).",
)
sig = state.signature

with ui.guard():
    vc = q.value_counts(sig, f)
    wins, means = svc.winning_means(q.winning_moments(sig, f).to_dict("records")[0])
dists = {m: svc.distribution(vc, m) for m in ("huxi", "deng", "fan", "score")}

if wins == 0:
    st.info("No winning hand in the selection.")
    st.stop()

c = st.columns(4)
for col, (name, m) in zip(c, means.items()):
    col.metric(f"mean {name}", svc.fmt_mean(m), help=f"95 % interval {svc.fmt_interval(m)}")
    col.caption(f"95 %: {svc.fmt_interval(m)} · n = {m.n:,} wins")

st.subheader("Distributions")
st.caption("Click a bar to list those hands (Drill-down), then open one in the replay.")
# One chart at a time (a radio, not tabs): tabs would draw all four in the browser.
ui.keep("huxi_metric")  # kept when the user comes back to the page
ui.param_in("metric", "huxi_metric", list(dists))  # and in the URL
shown = st.radio(
    "distribution of",
    list(dists),
    horizontal=True,
    key="huxi_metric",
    format_func=lambda m: svc.METRIC_LABELS[m],
)
ui.param_out("metric", shown)
metric, d = shown, dists[shown]
spec = charts.histogram(
    "v:Q",
    svc.METRIC_LABELS[metric],
    "share of wins",
    [tip("v:Q", title=svc.METRIC_LABELS[metric]), tip("n:Q", title="wins"),
     tip("share:Q", ".2%", "share of wins")],
    pick="pick",
)  # fmt: skip
event = ui.chart(svc.counts_frame(d), spec, on_select="rerun", key=f"hist_{metric}")
selection: dict[str, Any] = dict(event.selection or {}) if event else {}
picked = selection.get("pick")
if picked:
    v = picked[0].get("v")
    if v is not None:
        st.switch_page(
            ui.PAGE_FILES["drilldown"],
            query_params=ui.selection_params({"cond": f"{metric}_eq", "value": str(int(v))}),
        )
ui.table(svc.quantile_table(dists.values()), "quantiles", hide=())
cols = st.columns(3)
with cols[0]:
    ui.drill_link("Wins with 胡息 ≥ 30", "huxi_ge", 30)
with cols[1]:
    ui.drill_link("Wins by 破跑胡", "popao")
with cols[2]:
    ui.drill_link("Wins with score ≥ 10", "score_ge", 10)

st.subheader("By source of the winning card")
with ui.guard():
    src = svc.source_table(q.by_source(sig, f))
if not src.empty:
    ui.rate_chart(src, "source", "share of wins")
    ui.table(src.drop(columns=["code"]), "wins-by-source")

st.subheader("By 名堂")
with ui.guard():
    mt = svc.mingtang_table(q.by_mingtang(sig, f), q.mingtang_codes(sig))
if not mt.empty:
    ui.table(
        mt[
            [
                "level",
                "名堂",
                "wins with it",
                "mean score",
                "score 95 %",
                "share of wins",
                "95 % interval",
            ]
        ],
        "wins-by-mingtang",
        hide=(),
    )

st.subheader("Which groups the 胡息 comes from")
# from the summaries every win counts (they summarise each hand's facts); else the facts
missing = [] if q.summary_plan(f) is not None else [
    r.name for r in state.usable_runs if r.name in f.runs and not r.has_facts
]  # fmt: skip
with ui.guard():
    groups, covered = huxi.group_table(qh.group_sources(sig, f).to_dict("records")[0])
if missing:
    st.warning(
        f"Run{'s' if len(missing) > 1 else ''} {', '.join(missing)} {'have' if len(missing) > 1 else 'has'}"
        " no per-hand facts yet (recorded before them), so"
        f" {'they are' if len(missing) > 1 else 'it is'} not counted here: run"
        f" `paohuzi index {' '.join(missing)}` to derive them."
    )
if covered:
    st.caption(
        f"The winning readings of all {covered:,} selected wins"
        + (" of the runs with facts" if missing else "")
        + " (each hand's reading, derived when its shard was recorded or indexed)."
    )
    tips = [tip("group type:N"), tip("where:N"), tip("groups:Q"), tip("in hands:Q")]
    spec = charts.stacked_hbars(
        "share of 胡息:Q", "%", "group type:N", "where:N", [*tips, tip("胡息:Q")]
    )
    ui.chart(groups, spec)
    ui.table(
        groups,
        "huxi-groups",
        hide=(),
        formats={"share of 胡息": "{:.1%}", "mean 胡息 per group": "{:.2f}"},
    )
elif not missing:
    st.info("No winning hand in the selection to decompose.")
