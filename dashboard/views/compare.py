"""Compare: two selections (runs, policies, seats) side by side, every headline number with
the difference A − B and its 95 % interval, and the distributions overlaid."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, ui
from dashboard.charts import tip
from dashboard.queries import stats as q
from dashboard.services import filters as fsvc
from dashboard.services import stats as svc
from replay.analysis.figures.selection import Selection

state, _ = ui.start(
    "Compare",
    "Two selections side by side, e.g. 15 vs 10 胡息, basic vs full 花样, 3 vs 4 players, or"
    " two policies. Differences: Newcombe intervals for rates, normal for means, taking the"
    " two sides as independent samples.",
    pools=False,  # the page's own two selections, not the sidebar's
)
sig = state.signature
names = [r.name for r in state.usable_runs]
labels = {r.name: f"{r.name} — {r.rules}, {','.join(r.policies)}" for r in state.usable_runs}


def side(tag: str, default: str) -> Selection:
    st.markdown(f"**Side {tag}**")
    key = f"cmp_{tag}_runs"
    t = tag.lower()
    ui.param_in(t, key, names, multi=True)  # the sides are in the URL: a, a_pol, a_seats …
    if key not in st.session_state:
        st.session_state[key] = [default]
    st.session_state[key] = [r for r in st.session_state[key] if r in names]
    runs = st.multiselect(
        f"runs ({tag})",
        names,
        key=key,
        format_func=lambda n: labels.get(n, n),
        placeholder="all runs",
    )
    ch = fsvc.choices(state, runs)
    pkey = f"cmp_{tag}_pol"
    ui.param_in(f"{t}_pol", pkey, multi=True)
    st.session_state[pkey] = [p for p in st.session_state.get(pkey, []) if p in ch.policies]
    pols = st.multiselect(f"policies ({tag})", ch.policies, key=pkey, placeholder="all")
    skey = f"cmp_{tag}_seats"
    ui.param_in(f"{t}_seats", skey, multi=True, cast=int)
    st.session_state[skey] = [s for s in st.session_state.get(skey, []) if s in ch.seats]
    seats = st.multiselect(
        f"seats ({tag})",
        ch.seats,
        key=skey,
        placeholder="all",
        format_func=lambda s: f"seat {s}",
    )
    ui.param_out(t, runs or ["*"])
    ui.param_out(f"{t}_pol", pols)
    ui.param_out(f"{t}_seats", seats)
    return fsvc.resolve(state, runs, (), pols, seats)


cols = st.columns(2)
with cols[0]:
    fa = side("A", names[0])
with cols[1]:
    fb = side("B", names[1] if len(names) > 1 else names[0])

if not fa.runs or not fb.runs:
    st.warning("Choose at least one run on each side.")
    st.stop()

with ui.guard():
    ha = svc.headline(
        q.headline(sig, fa).to_dict("records")[0], q.winning_moments(sig, fa).to_dict("records")[0]
    )
    hb = svc.headline(
        q.headline(sig, fb).to_dict("records")[0], q.winning_moments(sig, fb).to_dict("records")[0]
    )
    va, vb = q.value_counts(sig, fa), q.value_counts(sig, fb)
    ma = svc.mingtang_table(q.by_mingtang(sig, fa), q.mingtang_codes(sig))
    mb = svc.mingtang_table(q.by_mingtang(sig, fb), q.mingtang_codes(sig))

st.subheader("Headline numbers")
st.caption(f"A: {fsvc.describe(fa, state)}  \nB: {fsvc.describe(fb, state)}")
if set(fa.runs) & set(fb.runs):
    st.info(
        "The two sides share runs, so they are not independent samples: for two policies on"
        " the same --duplicate deals, the paired differences on the Win rates page are the"
        " sharper test."
    )
ui.table(svc.compare_table(ha, hb), "compare-headline", hide=())

st.subheader("Distributions over the wins")
ui.keep("cmp_metric")  # kept when the user comes back to the page
ui.param_in("metric", "cmp_metric", list(svc.METRIC_LABELS))
metric = st.radio(
    "distribution of",
    ["huxi", "deng", "fan", "score"],
    horizontal=True,
    key="cmp_metric",
    format_func=lambda m: svc.METRIC_LABELS[m],
)
ui.param_out("metric", metric)
da, db_ = svc.distribution(va, metric), svc.distribution(vb, metric)
both = svc.compare_distributions(da, db_)
if both.empty:
    st.info("No wins on one side.")
else:
    label = svc.METRIC_LABELS[metric]
    tips = [tip("side:N"), tip("v:Q", title=label), tip("n:Q", title="wins"),
            tip("share:Q", ".2%", "share of wins")]  # fmt: skip
    spec = charts.grouped_bars("v:Q", label, "side:N", "share of wins", tips)
    ui.chart(both, spec)
qt = svc.quantile_table(
    [svc.distribution(v, m) for v in (va, vb) for m in ("huxi", "deng", "fan", "score")]
)
qt.insert(0, "side", ["A"] * 4 + ["B"] * 4)
ui.table(qt, "compare-quantiles", hide=())

st.subheader("名堂 frequencies")
cmp = svc.mingtang_compare(ma, mb)
if cmp.empty:
    st.info("No wins.")
else:
    ui.table(cmp, "compare-mingtang", hide=())
