"""Review: what the selected runs' stored reviews (``paohuzi review``) say of the policies —
per policy and kind of decision the blunder, mistake and inaccuracy rates, the share of best
options and the mean losses, with 95 % intervals (replay.analysis.review_rates, the numbers ``paohuzi
stats`` prints); and the costliest decisions, each opening the Replay page at its step."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import db, ui
from dashboard.queries import review as qr
from replay.analysis.figures.results import Mean, Rate

state, f = ui.start(
    "Review",
    "Where policies lose: the decisions of stored reviews (`paohuzi review RUN --sample K`),"
    " valued by determinized rollouts; classes by the winning chance given up (5 / 10 / 15"
    " points: inaccuracy, mistake, blunder).",
    pools=False,  # a section per run
)
sig = state.signature
runs = [r for r in state.usable_runs if r.name in f.runs]


def _pct(r: Rate) -> str:
    return f"{100 * r.p:.1f} % [{100 * r.lo:.1f}, {100 * r.hi:.1f}]"


def _mean(x: Mean) -> str:
    if x.lo != x.lo:  # one hand: no interval
        return f"{x.mean:.2f}"
    return f"{x.mean:.2f} [{x.lo:.2f}, {x.hi:.2f}]"


shown = 0
for run in runs:
    with ui.guard():
        per_key, warnings = qr.stored_rates(state.root, sig, run.name)
    for w in warnings:
        st.warning(db.redact(w))
    if not per_key:
        continue
    shown += 1
    st.subheader(f"run {run.name}")
    for k in per_key:
        st.caption(
            f"{k.hands:,} hands, {k.decisions:,} decisions reviewed with {k.rollouts} rollouts"
            f" per option by {k.rollout_policy}, seed {k.seed}; a hand is one cluster"
        )
        rows = [
            {
                "policy": t.policy, "kind": t.kind, "decisions": t.decisions,
                "blunders": _pct(t.blunder), "mistakes": _pct(t.mistake),
                "inaccuracies": _pct(t.inaccuracy), "best played": _pct(t.best),
                "score loss": _mean(t.score_loss), "win loss (points)": _mean(t.win_loss),
            }
            for t in k.rates
        ]  # fmt: skip
        ui.table(pd.DataFrame(rows), f"review-{run.name}-{k.rollouts}-{k.rollout_policy}-{k.seed}",
                 hide=())  # fmt: skip
        chart = pd.DataFrame(
            [
                {
                    "group": f"{t.policy} · {t.kind}",
                    "p": t.blunder.p,
                    "lo": t.blunder.lo,
                    "hi": t.blunder.hi,
                }
                for t in k.rates
            ]  # fmt: skip
        )
        ui.rate_chart(chart, "group", "blunder rate")
    top = qr.costliest_stored(state.root, sig, run.name, 10)
    if top:
        st.markdown(
            "**Costliest decisions** (by win chance given up; each opens the replay at its step)"
        )
        for d in top:
            label = (
                f"hand {d['hand']} step {d['step']} · seat {d['seat']} ({d['policy']}, {d['kind']}):"
                f" {d['verdict']}{' · ' + d['class'] if d['class'] else ''}"
            )
            st.page_link(
                ui.PAGE_FILES["replay"],
                label=label,
                icon=":material/play_circle:",
                query_params={
                    "run": run.name,
                    "hand": str(d["hand"]),
                    "step": str(d["step"]),
                    "seat": str(d["seat"]),
                },  # fmt: skip
            )

if not shown:
    st.info(
        "No stored review in the selected runs: `paohuzi review RUN --sample 200 --rollouts 64`"
        " reviews 200 hands and stores them; this page then shows their rates."
    )
