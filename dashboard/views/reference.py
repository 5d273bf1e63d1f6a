"""Reference: the selection's per-hand figures beside the published ones of its preset
(``reference/reference.json`` of ``paohuzi report``), each with the difference and its 95 %
interval, and whether they differ."""

from __future__ import annotations

import streamlit as st

from dashboard import db, ui
from dashboard.queries import stats as q
from dashboard.services import filters as fsvc
from dashboard.services import reference as rsvc
from engine.rules import find_rules
from replay.analysis.figures.selection import Selection
from replay.reference.published import (
    MissingReference,
    UnreadableReference,
    location,
    read_published,
    repository_root,
)

state, f = ui.start(
    "Reference",
    "The selection's figures per hand, beside the published reference figures of its preset"
    " (docs/REFERENCE.md, written by `paohuzi report`).",
    pools=False,  # one preset only
)
sig = state.signature

path = location()
label = rsvc.file_label(path, repository_root())
try:
    pub = read_published(path)
except MissingReference:
    st.info(
        f"No published reference figures at `{label}` yet: `make reference` (or `paohuzi"
        " report`) writes them beside docs/REFERENCE.md; `paohuzi dashboard --reference FILE`"
        " reads another file."
    )
    st.stop()
except UnreadableReference as e:
    st.error(
        db.redact(str(e).replace(str(path), f"`{label}`"))
        + ". Write it again with `make reference` (or `paohuzi report`)."
    )
    st.stop()

runs = [r for r in state.usable_runs if r.name in f.runs]


def _select(names: tuple[str, ...]) -> None:
    """The sidebar's selection set to ``names`` (a button's callback, before the sidebar)."""
    st.session_state["f_runs"] = list(names)
    st.session_state["f_rules"] = []


try:
    preset = rsvc.one_preset(runs)
except rsvc.NotOnePreset as e:
    st.warning(str(e))
    with st.container(horizontal=True):  # one click to a selection of one rule set
        for rules, members in fsvc.rule_groups(state, f).items():
            many = f"{len(members)} runs"
            st.button(
                f"{rules} ({', '.join(members) if len(members) <= 3 else many})",
                key=f"ref_pick_{rules}",
                on_click=_select,
                args=(members,),
                icon=":material/filter_alt:",
            )
    st.stop()
ref = pub.presets.get(preset)
if ref is None:
    st.info(
        f"The reference (`{label}`) has no figures of {preset}: it has"
        f" {', '.join(sorted(pub.presets)) or 'none'}. Select runs of one of them."
    )
    st.stop()

# Per hand of the whole table, as the reference: the sidebar's seats and policies do not apply.
sel = Selection(runs=f.runs, duplicate=f.duplicate)
with ui.guard():
    hl = q.headline(sig, sel).to_dict("records")[0]
    wm = q.winning_moments(sig, sel).to_dict("records")[0]
    moments = q.run_moments(sig, sel, find_rules(preset).active_players)
    moments = moments.to_dict("records")[0]
    # decisions per hand only when every run recorded its events (imported hands may not)
    events = all(r.events for r in runs)
    length = q.hand_length(sig, sel).to_dict("records") if events else []
mine = rsvc.selection_figures(hl, wm, moments, length)

seated = rsvc.policies(runs)
hands = sum(r.hands for r in runs)
names = f" ({', '.join(r.name for r in runs)})" if len(runs) <= 4 else ""
st.markdown(
    f"**Selection**: {preset}, {len(runs)} run{'s' if len(runs) > 1 else ''}{names},"
    f" {hands:,} hands; policies {', '.join(f'`{p}`' for p in seated)}.  \n"
    f"**Reference**: {preset}, `{ref.policy}` in every seat, {ref.hands:,} hands (run"
    f" `{ref.run}`, scale {pub.scale}; `{label}`)."
)
if set(seated) == {ref.policy}:
    st.caption(
        "The selection plays the reference's policy in every seat: a difference is chance"
        " (one in twenty figures differs at 95 % when nothing does), or something else that"
        " changed — the code, the session length."
    )
else:
    st.caption(
        f"The reference plays the preset's strongest fast policy (`{ref.policy}`) in every"
        " seat: a difference can come from the selection's other policies, not only from"
        " chance."
    )
if f.seats or f.policies:
    st.caption(
        "The figures are per hand of the whole table, as the reference's: the sidebar's seat"
        " and policy filters are not applied on this page."
    )

table = rsvc.comparison_table(mine, ref.figures)
ui.table(table, f"reference-{preset}", hide=())
notes = [
    "Intervals 95 %: Wilson for rates, cluster-robust for means (a hand is its own cluster, a"
    " deal in --duplicate runs); the difference treats the selection and the reference as"
    " independent samples (Newcombe for rates); it differs when its interval excludes 0.",
    "The dealer advantage is his win rate minus a non-dealer's, per hand. Rates and the"
    " dealer advantage in percent, their differences in percentage points.",
]
if mine["decisions_per_hand"] is None:
    notes.append("Decisions per hand: not every run of the selection recorded its events.")
st.caption(" ".join(notes))
