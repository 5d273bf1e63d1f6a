"""docs/REFERENCE.md from the report's recorded runs alone (:mod:`replay.reference.plan`).

:func:`gather` reads every figure of every study from the store through the one statistics
layer (:mod:`replay.analysis.stats`, :mod:`replay.analysis.event_stats`,
:mod:`replay.analysis.figures`), each run checked first as ``paohuzi stats`` checks it, and
refused when it is damaged or not complete; :func:`render` turns them into the document and
its charts. Nothing else goes in (no clock, no machine): the same runs give the same bytes,
and each table states the command, code version, hands and wall time its runs recorded (the
wall time from the manifest's first write to its last; a run resumed says so).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import CorruptLog
from replay.analysis.event_stats import EventStats, event_stats
from replay.analysis.figures import effects as E
from replay.analysis.figures import fetch
from replay.analysis.figures import groups as G
from replay.analysis.figures.results import Effect, Mean, Rate, distribution, effects, run_means
from replay.analysis.figures.selection import Selection
from replay.analysis.figures.values import value_counts
from replay.analysis.ladder import Rating, bradley_terry
from replay.analysis.skill import Decomposition, decompose
from replay.analysis.stats import RunStats, run_stats
from replay.reference.plan import ANCHOR, Scale, Study, by_section
from replay.reference.published import PUBLISHED, published
from replay.reference.svg import bars_svg, intervals_svg
from replay.store.runs import Store

#: The per-hand figures of the rule and strength sections (replay.analysis.figures.effects).
FIGURES = ("huang", "dealer_win", "dealer_adv", "score", "huxi")
_FIGURE_LABELS = {
    "huang": "荒庄",
    "dealer_win": "dealer's win rate",
    "dealer_adv": "dealer advantage",
    "score": "score of a win",
    "huxi": "胡息 of a win",
}
_PERCENT = {"huang", "dealer_win", "dealer_adv"}
_RATES = {"huang", "dealer_win"}


@dataclass(frozen=True)
class Recorded:
    """What one study's run recorded, as the document states it."""

    study: Study
    run: str
    seed: int
    command: str
    code: str
    hands: int
    seconds: float
    resumed: int


@dataclass(frozen=True)
class Gathered:
    """Every figure of one study."""

    recorded: Recorded
    stats: RunStats
    events: EventStats | None
    means: dict[str, Mean]
    distributions: dict[str, Any]


def _recorded(study: Study, manifest: dict[str, Any]) -> Recorded:
    if manifest.get("status") != "complete":
        raise CorruptLog(f"run {manifest.get('run')!r} is not complete: run 'paohuzi report' again")

    def when(key: str) -> _dt.datetime:
        return _dt.datetime.fromisoformat(str(manifest[key]))

    code = manifest.get("code", {})
    return Recorded(
        study, str(manifest["run"]), int(manifest["params"]["seed"]),
        " ".join(manifest.get("command") or ["(not recorded)"]),
        f"{code.get('package', '?')} {code.get('version', '?')} ({code.get('git') or 'no git'})",
        int(manifest["progress"]["hands"]), (when("updated") - when("created")).total_seconds(),
        len(manifest.get("resumed") or ()),
    )  # fmt: skip


@dataclass(frozen=True)
class Figures:
    """Everything the document shows: each study's figures, the rule switches against the
    hunan run (by study key), each preset's ladder ratings (in the ladders' order) and the
    skill decomposition."""

    runs: dict[str, Gathered]
    effects: dict[str, dict[str, Effect]]
    ladders: dict[str, list[Rating]]
    skill: Decomposition


def gather(store: Store, studies: Sequence[Study]) -> Figures:
    """Every figure of ``studies`` from their runs in ``store`` (by
    :meth:`~replay.reference.plan.Study.run_name`); ``CorruptLog`` naming the first run that
    is damaged or not complete, ``StoreError`` for one that is missing."""
    names = [s.run_name() for s in studies]
    state = store.scan(manifests=False)
    con = store.connect(state)
    try:
        stats = {r.run: r for r in run_stats(store, names, con=con, state=state)}
        events = {e.run: e for e in event_stats(store, [s.run_name() for s in studies
                                                         if s.section == "preset"])}  # fmt: skip
        runs = {}
        for study, name in zip(studies, names):
            run = store.run(name)
            row = fetch(con, E.moments(state, (name,), run.rules.active_players))[0]
            counts = fetch(con, value_counts(Selection(runs=(name,)), None))
            runs[study.key] = Gathered(
                _recorded(study, run.manifest), stats[name], events.get(name),
                run_means(row, FIGURES),
                {m: distribution(counts, m) for m in ("huxi", "deng", "fan", "score")},
            )  # fmt: skip
        effect_studies = by_section(studies, "effect")
        base = effect_studies[0].run_name()
        active = store.run(base).rules.active_players
        effects_of = {
            s.key: effects(fetch(con, E.paired_moments(s.run_name(), base, active))[0], FIGURES)
            for s in effect_studies[1:]
        }
        ladders = {}
        for preset, pairs in ladder_groups(studies).items():
            pair_runs = tuple(s.run_name() for s in pairs)
            duels = [
                (r["a"], r["b"], r["a_won"], r["b_won"], r["ties"])
                for r in fetch(con, G.duels(Selection(runs=pair_runs, duplicate=pair_runs)))
            ]
            ladders[preset] = bradley_terry(duels, ANCHOR)
        (skill,) = by_section(studies, "skill")
        cur = con.execute(*G.seat_scores(skill.run_name()))
        decomposition = decompose(cur.fetchall())
        return Figures(runs, effects_of, ladders, decomposition)
    finally:
        con.close()


def ladder_groups(studies: Sequence[Study]) -> dict[str, list[Study]]:
    """The ladder's pairs by preset, the presets in the studies' order."""
    out: dict[str, list[Study]] = {}
    for s in by_section(studies, "ladder"):
        out.setdefault(s.preset, []).append(s)
    return out


# ---------------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------------


def _pct(x: float, digits: int = 2) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.{digits}f}"


def rate(r: Rate | None) -> str:
    """``12.34 % [11.90, 12.78]``."""
    if r is None or r.n == 0:
        return "–"
    return f"{_pct(r.p)} % [{_pct(r.lo)}, {_pct(r.hi)}]"


def mean(m: Mean, percent: bool = False, digits: int = 2) -> str:
    """``+1.23 [+1.10, +1.36]`` (in percentage points when ``percent``)."""
    k = 100.0 if percent else 1.0
    if math.isnan(m.mean):
        return "–"
    if math.isnan(m.lo):
        return f"{k * m.mean:.{digits}f}"
    return f"{k * m.mean:.{digits}f} [{k * m.lo:.{digits}f}, {k * m.hi:.{digits}f}]"


def diff(m: Mean, percent: bool = False, bold: bool = True) -> str:
    """``+0.12 [-0.03, +0.27]``, in bold (``bold``) when the interval excludes 0."""
    k = 100.0 if percent else 1.0
    if math.isnan(m.lo):
        return "–"
    text = f"{k * m.mean:+.2f} [{k * m.lo:+.2f}, {k * m.hi:+.2f}]"
    return f"**{text}**" if bold and (m.lo > 0 or m.hi < 0) else text


def _figure(name: str, m: Mean) -> str:
    """A per-hand figure of :data:`FIGURES`: a rate with its Wilson interval (every hand its
    own cluster in these runs), the dealer's advantage in points, a mean of the wins."""
    if name in _RATES:
        return rate(Rate.of(round(m.mean * m.n), m.n)) if m.n else "–"
    return mean(m, percent=name in _PERCENT)


def _effect(name: str, e: Effect) -> str:
    d = e.diff
    if d.mean == 0 and d.lo == 0 and d.hi == 0:
        return "0 on every deal"
    return diff(d, percent=name in _PERCENT)


def _provenance(rows: Sequence[Recorded]) -> list[str]:
    out = [
        "",
        "| run | seed | hands | wall time | code | command |",
        "|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        again = f" (resumed {r.resumed}×)" if r.resumed else ""
        out.append(
            f"| `{r.run}` | {r.seed} | {r.hands:,} | {r.seconds:,.0f} s{again} | {r.code} |"
            f" `{r.command}` |"
        )
    return out


# ---------------------------------------------------------------------------------------------
# The document
# ---------------------------------------------------------------------------------------------


def render(scale: Scale, studies: Sequence[Study], fig: Figures) -> tuple[str, dict[str, str]]:
    """The document's text and its charts (file name → SVG), from the gathered figures."""
    lines = [
        "# Reference statistics",
        "",
        "Generated by `paohuzi report` (`make reference`) from the runs listed under each"
        f" table, scale `{scale.name}`. Every figure is read from the recorded hands through"
        " the statistics layer of `paohuzi stats`; intervals are 95 %, Wilson for rates and"
        " cluster-robust for means (the cluster is the deal). Rates and their intervals are in"
        " percent; a difference whose interval excludes 0 is in bold.",
        "",
        f"{len(studies)} runs, {sum(g.recorded.hands for g in fig.runs.values()):,} hands,"
        f" {sum(g.recorded.seconds for g in fig.runs.values()) / 60:,.0f} minutes of wall time"
        " as their manifests recorded them (each run's below its table).",
    ]
    svgs: dict[str, str] = {}
    got = fig.runs
    presets = by_section(studies, "preset")
    lines += _preset_overview(presets, got)
    for study in presets:
        lines += _preset_detail(study, got[study.key], svgs)
    lines += _effects_section(by_section(studies, "effect"), got, fig.effects)
    lines += _strength_section(by_section(studies, "strength"), got)
    lines += _ladder_section(studies, got, fig.ladders, svgs)
    (skill,) = by_section(studies, "skill")
    lines += _skill_section(skill, got[skill.key], fig.skill, svgs)
    svgs[PUBLISHED] = published(scale, presets, got)
    return "\n".join(lines) + "\n", svgs


def _preset_overview(presets: Sequence[Study], got: dict[str, Gathered]) -> list[str]:
    out = [
        "",
        "## Per preset",
        "",
        "Each preset under the strongest fast policy it has in every seat (its shipped"
        " `learned` set, else its tuned `heuristic` set, else `heuristic`), in sessions of 8"
        " hands. The dealer advantage is the dealer's win rate minus a non-dealer's, hand by"
        " hand (percentage points).",
        "",
        "| preset | policy | hands | win rate % | 荒庄 % | dealer's win rate % | dealer advantage (pp)"
        " | 自摸 share % | 胡息 of a win | score of a win | decisions per hand |",
        "|---|---|---:|---|---|---|---|---|---|---|---|",
    ]
    for s in presets:
        g = got[s.key]
        st = g.stats
        decisions = g.events.decisions_per_hand if g.events else None
        out.append(
            f"| {s.preset} | `{s.policy}` | {st.hands:,} | {rate(st.outcomes.get('win'))} |"
            f" {rate(st.outcomes.get('huangzhuang'))} | {_figure('dealer_win', g.means['dealer_win'])} |"
            f" {_figure('dealer_adv', g.means['dealer_adv'])} | {rate(st.zimo)} |"
            f" {mean(g.means['huxi'])} | {mean(g.means['score'])} |"
            f" {mean(decisions) if decisions else '–'} |"
        )
    out += _provenance([got[s.key].recorded for s in presets])
    return out


def _preset_detail(study: Study, g: Gathered, svgs: dict[str, str]) -> list[str]:
    st = g.stats
    out = ["", f"### {study.preset}", "", "| seat | win rate % | mean score per hand |",
           "|---|---|---|"]  # fmt: skip
    for row in st.seats:
        out.append(f"| {row.key} | {rate(row.win)} | {diff(row.score, bold=False)} |")
    out += ["", "Winning hands: quantiles (10, 25, 50, 75, 90 %), mean, range.", "",
            "| of a win | 10 % | 25 % | 50 % | 75 % | 90 % | mean | min – max |",
            "|---|---:|---:|---:|---:|---:|---|---|"]  # fmt: skip
    for metric, label in (("huxi", "胡息"), ("deng", "等"), ("fan", "番"), ("score", "score")):
        w = st.winning.get(metric)
        if w is None:
            continue
        qs = " | ".join(f"{q:g}" for q in w.quantiles)
        out.append(f"| {label} | {qs} | {mean(w.mean)} | {w.min:g} – {w.max:g} |")
    for metric, label in (("huxi", "胡息"), ("score", "score")):
        name = f"reference/{study.preset}-{metric}.svg"
        svgs[name] = bars_svg(g.distributions[metric], f"{study.preset}: {label} of a win")
        out += ["", f"![{study.preset}: {label} of a win]({name})"]
    out += ["", "| 名堂 | share of wins % |", "|---|---|"]
    for m in st.mingtang:
        out.append(f"| {m.name} ({m.pinyin}) | {rate(m.share)} |")
    t = st.auto_tianhu
    if t is not None:
        out += [
            "",
            "3提/5坎 天胡 (dealt, before any play), per hand: observed"
            f" {rate(t.any)}, exact probability {_pct(t.exact_any, 4)} % (a lower bound"
            f" within {100 * t.exact_bound:.1e} pp: RULES §9); the dealer's observed"
            f" {rate(t.dealer)}, exact {_pct(t.exact_dealer, 4)} %.",
        ]
    ev = g.events
    if ev is not None:
        out += ["", "| action | per seat and hand |", "|---|---|"]
        for a in ev.actions:
            forced = " (forced)" if a.forced else ""
            out.append(f"| {a.kind}{forced} | {mean(a.per_seat_hand, digits=3)} |")
        out += ["", "| offered | declined % |", "|---|---|"]
        for d in ev.declines:
            out.append(f"| {d.offered} | {rate(d.declined)} |")
    return out


def _effects_section(
    studies: Sequence[Study], got: dict[str, Gathered], effects_of: dict[str, dict[str, Effect]]
) -> list[str]:
    base = studies[0]
    out = [
        "",
        "## Rule effects",
        "",
        f"From the hunan preset under `{base.policy}`, one switch at a time, every run on the"
        " same deals (the same seed; sessions of one hand, so each deal is the same deck with"
        " the same dealer in every run); each figure is the switched run minus the hunan run,"
        ' paired by deal (rates and the dealer advantage in percentage points); "0 on every'
        " deal\" where the switch changed no deal's figure. `huangzhuang_rotate` is left out: it moves who deals after a 荒庄,"
        " which one-hand sessions never reach.",
        "",
        "| switch | " + " | ".join(_FIGURE_LABELS[f] for f in FIGURES) + " |",
        "|---|" + "---|" * len(FIGURES),
        "| hunan | " + " | ".join(_figure(f, got[base.key].means[f]) for f in FIGURES) + " |",
    ]
    for s in studies[1:]:
        eff = effects_of[s.key]
        out.append(
            f"| {s.label} (`{' '.join(s.overrides)}`) | "
            + " | ".join(_effect(f, eff[f]) for f in FIGURES)
            + " |"
        )
    out += _provenance([got[s.key].recorded for s in studies])
    return out


def _strength_section(studies: Sequence[Study], got: dict[str, Gathered]) -> list[str]:
    out = [
        "",
        "## Strength effects",
        "",
        "The hunan preset with the same policy in every seat, for each built-in policy and"
        " shipped set, on the same deals (the search on the first of them only: it plays a"
        " few hands a second), sessions of one hand: how much each figure depends on how well"
        " the table plays.",
        "",
        "| policy | hands | " + " | ".join(_FIGURE_LABELS[f] for f in FIGURES) + " |",
        "|---|---:|" + "---|" * len(FIGURES),
    ]
    for s in studies:
        g = got[s.key]
        out.append(
            f"| `{s.policy}` | {g.stats.hands:,} | "
            + " | ".join(_figure(f, g.means[f]) for f in FIGURES)
            + " |"
        )
    out += _provenance([got[s.key].recorded for s in studies])
    return out


def _ladder_section(
    studies: Sequence[Study], got: dict[str, Gathered], ladders: dict[str, list[Rating]],
    svgs: dict[str, str],
) -> list[str]:  # fmt: skip
    groups = ladder_groups(studies)
    out = [
        "",
        "## Strength ladder",
        "",
        f"On each of {', '.join(groups)}: every pair of policies in a duplicate match, one seat"
        " played by the one, the others by the other, each deal played once per rotation of"
        " the seats. A deal is a match, won by the policy whose mean score change per"
        " seat-hand is higher (a tie half each). The ratings are a Bradley–Terry fit of all"
        f" the preset's matches on the Elo scale (`{ANCHOR}` fixed at 1500; 95 % intervals"
        " from the fit's information, each relative to the anchor; one tied match added to"
        " every pair). Ratings are comparable within a preset only. Below each ratings table,"
        " each policy against the next one down the ladder: the paired difference of score"
        " per hand (ADP: the upper policy minus the lower, per seat-hand, over the same deals)"
        " and of win rate (WP, percentage points), deal-clustered 95 % intervals.",
    ]
    for preset, pairs in groups.items():
        out += _ladder(preset, pairs, got, ladders[preset], svgs)
    return out


def _ladder(
    preset: str, studies: Sequence[Study], got: dict[str, Gathered], ratings: list[Rating],
    svgs: dict[str, str],
) -> list[str]:  # fmt: skip
    out = [
        "",
        f"### {preset}",
        "",
        "| rank | policy | rating (Elo) | matches |",
        "|---:|---|---|---:|",
    ]
    for i, r in enumerate(ratings, 1):
        span = "" if r.policy == ANCHOR else f" [{r.lo:.0f}, {r.hi:.0f}]"
        out.append(f"| {i} | `{r.policy}` | {r.elo:.0f}{span} | {r.matches:,} |")
    name = "reference/ladder.svg" if preset == "hunan" else f"reference/ladder-{preset}.svg"
    svgs[name] = intervals_svg(
        [(r.policy, r.elo, r.lo, r.hi) for r in ratings], f"strength ladder, {preset} (Elo, 95 %)"
    )
    out += [
        "",
        f"![the strength ladder, {preset}]({name})",
        "",
        "| upper | lower | deals | ADP (score per hand) | WP (pp) |",
        "|---|---|---:|---|---|",
    ]
    by_pair = {frozenset(s.policies): s for s in studies}
    for upper, lower in zip(ratings, ratings[1:]):
        study = by_pair.get(frozenset((upper.policy, lower.policy)))
        if study is None:
            continue
        row = next(
            (p for p in got[study.key].stats.paired if {p.a, p.b} == {upper.policy, lower.policy}),
            None,
        )
        if row is None:
            continue
        sign = 1.0 if row.a == upper.policy else -1.0
        score, win = _signed(row.score_diff, sign), _signed(row.win_diff, sign)
        out.append(
            f"| `{upper.policy}` | `{lower.policy}` | {row.deals:,} | {diff(score)} |"
            f" {diff(win, percent=True)} |"
        )
    out += _provenance([got[s.key].recorded for s in studies])
    return out


def _signed(m: Mean, sign: float) -> Mean:
    """``m`` of ``a − b`` as ``b − a`` when ``sign`` is −1."""
    lo, hi = sorted((sign * m.lo, sign * m.hi))
    return Mean(sign * m.mean, lo, hi, m.n)


def _share(x: Any) -> str:
    return f"{_pct(x.share, 1)} % [{_pct(x.lo, 1)}, {_pct(x.hi, 1)}]"


def _skill_section(study: Study, g: Gathered, d: Decomposition, svgs: dict[str, str]) -> list[str]:
    table = ", ".join(f"`{p}`" for p in study.policies)
    out = [
        "",
        "## Skill against luck",
        "",
        f"One duplicate run of the hunan preset with {table} at the table, seats rotated, so"
        " every seat's cards are played by each of them in turn. The variance of a seat's"
        " score change per hand is split by a two-way analysis of variance (method of"
        " moments, no replication; `replay/analysis/skill.py`): the policy playing the seat,"
        " the cards (the deal seen from the seat: its hand and the dealer; every rotation of a"
        " deal has the same), and the rest (the same deal played out differently: which cards"
        " of the stock reach the seat and when depends on everyone's play). Intervals: 2.5 and 97.5 % points of a bootstrap over deals"
        f" ({d.deals:,} deals, {d.seat_hands:,} seat-hands).",
        "",
        "| part | share of the variance per hand |",
        "|---|---|",
        f"| the policy | {_share(d.policy)} |",
        f"| the cards | {_share(d.cards)} |",
        f"| the rest | {_share(d.rest)} |",
        "",
        "| policy | mean score change per seat-hand |",
        "|---|---:|",
    ]
    for p, m in zip(d.policies, d.means):
        out.append(f"| `{p}` | {m:+.3f} |")
    out += [
        "",
        "Over a session of n hands (hands taken as independent) the policy's part grows as"
        " n² against n: its share of the variance of a seat's total is n·V_P / (n·V_P + V_C +"
        f" V_E). It explains half after {d.half_at.share:,.1f} hands [{d.half_at.lo:,.1f},"
        f" {d.half_at.hi:,.1f}].",
        "",
        "| hands | share of the policy |",
        "|---:|---|",
    ]
    for hands, share in d.growth:
        out.append(f"| {hands:,} | {_share(share)} |")
    name = "reference/skill.svg"
    svgs[name] = intervals_svg(
        [(f"{h} hands", 100 * x.share, 100 * x.lo, 100 * x.hi) for h, x in d.growth],
        "share of the variance explained by the policy (%)",
    )
    out += ["", f"![the policy's share by session length]({name})"]
    out += _provenance([g.recorded])
    return out
