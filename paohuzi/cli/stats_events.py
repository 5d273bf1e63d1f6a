"""``paohuzi stats --events``: the event figures (:mod:`replay.analysis.event_stats`) as text;
this module only renders them."""

from __future__ import annotations

from typing import Any

from paohuzi.cli.text_table import aligned, ci, ci_pct, num, pct


def _rate(r: Any, digits: int = 1) -> list[str]:
    return [f"{r.k:,}", f"{r.n:,}", pct(r.p, digits), ci_pct(r, digits)]


def render(s: Any) -> str:
    out = [
        f"run {s.run} · events of {s.hands:,} hands ({s.clusters:,} clusters; from its"
        f" {'event summaries' if s.source == 'summaries' else 'events table'}); 95 % intervals"
    ]
    if not s.hands:
        out.append("  no hands recorded yet")
        return "\n".join(out)
    rows = [["per hand", "hands", "of", "rate", "95 % CI (%)"]]
    for label, r in (("臭胡 (a 胡 declined)", s.chouhu), ("忍碰 (a 碰 declined)", s.renpeng),
                     ("八块 (a second 跑/提)", s.bakuai)):  # fmt: skip
        rows.append([label, *_rate(r)])
    q = s.decisions["quantiles"]
    out.append(aligned(rows, right=(1, 2, 3)))
    if s.decisions_per_hand is not None and s.draws_per_hand is not None:
        out.append(
            f"  hand length: {_mean(s.decisions_per_hand)} decisions (p10 {q['0.1']:g}, median"
            f" {q['0.5']:g}, p90 {q['0.9']:g}; {min(s.decisions['values'])} …"
            f" {max(s.decisions['values'])}); {_mean(s.draws_per_hand)} draws from the stock"
        )
    rows = [["actions per seat-hand", "kind", "", "events", "mean", "95 % CI"]]
    for a in s.actions:
        rows.append([a.policy, a.kind, "forced" if a.forced else "chosen", f"{a.events:,}",
                     num(a.per_seat_hand.mean), ci(a.per_seat_hand)])  # fmt: skip
    out.append(aligned(rows, right=(3, 4)))
    rows = [["declined when offered", "offered", "passed", "offers", "rate", "95 % CI (%)"]]
    for d in s.declines:
        rows.append([d.policy, d.offered, *_rate(d.declined)])
    out.append(aligned(rows, right=(2, 3, 4)))
    rows = [["forced share", "forced", "events", "share", "95 % CI (%)"]]
    for f in s.forced:
        rows.append([f.policy, *_rate(f.rate)])
    out.append(aligned(rows, right=(1, 2, 3)))
    rows = [["options per real choice", "choices", "mean", "distribution (options: share)"]]
    for o in s.options:
        dist = ", ".join(f"{v}: {100 * c / o.choices:.0f}%" for v, c in zip(o.values, o.counts)
                         if 100 * c / o.choices >= 1)  # fmt: skip
        rows.append([o.policy, f"{o.choices:,}", f"{o.mean:.2f}", dist])
    out.append(aligned(rows, right=(1, 2)))
    if s.paired:
        rows = [["paired, a − b per seat-hand", "b", "kind", "", "deals", "diff", "95 % CI"]]
        for x in s.paired:
            rows.append([x.a, x.b, x.kind, "forced" if x.forced else "chosen", f"{x.deals:,}",
                         f"{x.diff.mean:+.3f}", ci(x.diff)])  # fmt: skip
        out.append(aligned(rows, right=(4, 5)))
    w = s.win_stock
    wins = sum(w["counts"])
    if wins:
        by = sorted(zip(w["values"], w["counts"]), reverse=True)
        early = sum(c for v, c in by if v >= 10)
        out.append(
            f"  win timing: {wins:,} wins, {100 * early / wins:.1f} % with 10 or more cards left in"
            f" the stock; median stock left {_median(by):g}; 荒庄 {w['huang']:,} hands"
        )
    out.append(_render_facts(s.facts))
    return "\n".join(out)


def _render_facts(facts: Any) -> str:
    """The per-policy figures from the per-hand facts, or why there are none."""
    if facts is None:
        return "  no per-hand facts (recorded before them): run 'paohuzi index' to derive them"
    rows = [["from the facts", "figure", "k", "of", "rate", "95 % CI (%)"]]
    for f in facts:
        rows.append([f.policy, "破跑胡 per win", *_rate(f.popao_per_win, 2)])
        rows.append(["", "破跑胡 per seat-hand", *_rate(f.popao_per_hand, 2)])
        rows.append(["", f"比牌 per seat-hand ({f.bipai:,} eats)", *_rate(f.bipai_per_seat_hand)])
        rows.append(["", f"conflict per hand ({f.conflicts:,})", *_rate(f.conflict_per_hand)])
    return aligned(rows, right=(2, 3, 4))


def _mean(m: Any) -> str:
    """A mean with its 95 % interval, when it has one."""
    interval = ci(m)
    return f"{num(m.mean)} {interval}" if interval else num(m.mean)


def _median(pairs: list[tuple[int, int]]) -> float:
    n = sum(c for _, c in pairs)
    seen = 0
    for v, c in sorted(pairs):
        seen += c
        if 2 * seen >= n:
            return float(v)
    return float("nan")
