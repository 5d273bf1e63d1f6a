"""The Actions page (issue 24): the event figures of ``paohuzi stats --events`` for the
sidebar's selection, each per-hand rate linking to Drill-down, whose hands open in the Replay
page at the step where it happened."""

from __future__ import annotations

from pathlib import Path

from dash_helpers import run_page

from dashboard.services.replay import event_step
from replay.analysis.event_stats import event_stats
from replay.replayer.hand import load_hand
from replay.store import open_store


def test_actions_page_shows_the_event_figures(store_dir: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    use_store(store_dir)
    at = run_page("actions")
    assert not at.exception and not at.error
    heads = [s.value for s in at.subheader]
    assert heads[:3] == ["Per hand", "Declined when offered", "Actions per seat-hand"]
    per_hand = at.table[0].value
    want = {s.run: s for s in event_stats(open_store(store_dir))}
    for _, row in per_hand.iterrows():  # the numbers of stats --events, run by run
        s = want[row["run"]]
        rate = {"臭胡": s.chouhu, "忍碰": s.renpeng, "八块": s.bakuai}[row["what"][:2]]
        assert (row["k"], row["of"]) == (rate.k, rate.n)
    links = {p.proto.label: p.proto.query_string for p in at.get("page_link")}
    assert links["Hands with a 八块"] == "cond=bakuai&runs=base"  # with the selection


def test_a_drilled_hand_opens_where_it_happened(store_dir: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    use_store(store_dir)
    at = run_page("drilldown", {"cond": "bakuai"})
    assert not at.exception and not at.error
    assert "八块" in at.subheader[0].value
    (link,) = [p for p in at.get("page_link") if "replay" in p.proto.page]
    assert "step where it happened" in link.proto.label and "at=bakuai" in link.proto.query_string
    q = dict(kv.split("=") for kv in link.proto.query_string.split("&"))
    rp = run_page("replay", q)
    assert not rp.exception and not rp.error
    log = load_hand(store_dir, q["run"], int(q["hand"]))
    k = event_step(log, "bakuai")
    assert rp.slider(key="rp_step").value == k
    kinds, seats = log.event_rows["kind"], log.event_rows["seat"]
    assert kinds[k] in (4, 6)  # a 提 or 跑 …
    assert sum(1 for j in range(k + 1) if seats[j] == seats[k] and kinds[j] in (4, 6)) == 2
