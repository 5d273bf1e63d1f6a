"""The Reference page's numbers: the selection's per-hand figures beside the published ones
(:mod:`replay.reference.published`), with the difference and its interval. No streamlit.

The reference is per preset, so the selection must play one preset as it is
(:func:`one_preset`); its figures come from the statistics layer's rows
(:func:`selection_figures`) and the differences treat the two as independent samples
(:func:`~replay.analysis.figures.results.rate_diff`, Newcombe;
:func:`~replay.analysis.figures.results.mean_diff`).

>>> from replay.analysis.figures.results import Rate
>>> row = comparison_table({"win": Rate.of(80, 100)}, {"win": Rate.of(700, 1000)}).iloc[0]
>>> row["selection"], row["reference"]
('80.0 % [71.1 – 86.7 %]', '70.0 % [67.1 – 72.8 %]')
>>> row["selection − reference"], row["differs"]
('+10.00 pp [+0.70 – +17.27 pp]', 'yes')
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dashboard.services.stats import fmt_interval, fmt_mean, fmt_rate, headline
from replay.analysis.figures.results import (
    Mean,
    Rate,
    count,
    mean_diff,
    num,
    rate_diff,
    run_means,
)
from replay.analysis.intervals import ClusterSums
from replay.reference.published import FIGURES
from replay.store.scan import RunInfo

#: Each figure's name on the page and what its n counts.
LABELS = {
    "win": ("win (hand ends in a 胡)", "hands"),
    "huangzhuang": ("荒庄", "hands"),
    "dealer_win": ("dealer wins the hand", "hands"),
    "dealer_adv": ("dealer advantage", "hands"),
    "zimo": ("自摸 among wins", "wins"),
    "huxi": ("mean winning 胡息", "wins"),
    "score": ("mean score of a win", "wins"),
    "decisions_per_hand": ("decisions per hand", "hands"),
}
#: Means shown in percentage points (a difference of two rates).
_POINTS = {"dealer_adv"}

Figure = Rate | Mean | None


class NotOnePreset(ValueError):
    """A selection that cannot be set beside one preset's figures; the message says why and
    what to select."""


def one_preset(runs: Sequence[RunInfo]) -> str:
    """The preset every run of ``runs`` plays as it is (the same rule set, no ``--set``);
    :class:`NotOnePreset` when they mix rule sets or play one with overrides.

    >>> from types import SimpleNamespace as R
    >>> one_preset([R(name="a", rules="hunan", rules_preset="hunan", rules_fingerprint="f1")])
    'hunan'
    >>> one_preset([R(name="a", rules="hunan", rules_preset="hunan", rules_fingerprint="f1"),
    ...             R(name="b", rules="hunan-4p", rules_preset="hunan-4p", rules_fingerprint="f2")])
    Traceback (most recent call last):
    ...
    dashboard.services.reference.NotOnePreset: The selection mixes rule sets: hunan (a); hunan-4p (b). The reference is per preset: select the runs of one preset in the sidebar (Runs or Rules).
    """
    groups: dict[str, list[RunInfo]] = {}
    for r in runs:
        groups.setdefault(r.rules_fingerprint or r.rules, []).append(r)
    if len(groups) > 1:
        parts = "; ".join(
            f"{g[0].rules} ({', '.join(r.name for r in g)})"
            for g in sorted(groups.values(), key=lambda g: g[0].rules)
        )
        raise NotOnePreset(
            f"The selection mixes rule sets: {parts}. The reference is per preset: select the"
            " runs of one preset in the sidebar (Runs or Rules)."
        )
    (first, *_) = next(iter(groups.values()))
    if not first.rules_preset:
        raise NotOnePreset(
            f"The selected runs play {first.rules}, not a preset as it is: the reference has"
            " figures of the presets only. Select runs of one preset without rule overrides"
            " in the sidebar."
        )
    return str(first.rules_preset)


def policies(runs: Iterable[RunInfo]) -> list[str]:
    """Every policy seated in ``runs``, sorted."""
    return sorted({p for r in runs for p in r.policies})


def decisions_per_hand(length: Iterable[Mapping[str, Any]]) -> Mean | None:
    """The mean decisions per hand from the rows of
    :func:`replay.analysis.figures.events.hand_length` (None without them), as
    :mod:`replay.analysis.event_stats` reads them."""
    r = next((r for r in length if str(r["what"]) == "decisions"), None)
    if r is None or not count(r["m"]):
        return None
    return Mean.of(ClusterSums(count(r["d"]), num(r["y"]), num(r["m"]), num(r["yy"]),
                               num(r["ym"]), num(r["mm"])))  # fmt: skip


def selection_figures(
    hl: Mapping[str, Any],
    wm: Mapping[str, Any],
    moments: Mapping[str, Any],
    length: Iterable[Mapping[str, Any]],
) -> dict[str, Figure]:
    """The selection's figures, named as the reference's: win, 荒庄 and 自摸 from the rows
    of ``outcomes.headline`` and ``outcomes.winning_moments``; the dealer's win rate, his
    advantage and the means of a win from the row of ``effects.run_moments`` (or of
    ``effects.summary_moments``, the same row from the summaries; the dealer's win rate as
    a rate, on its clusters, as the reference makes it); decisions per hand from
    the rows of ``events.hand_length``."""
    h = headline(hl, wm)
    m = run_means(moments, ("dealer_win", "dealer_adv", "huxi", "score"))
    dw = m["dealer_win"]
    dealer_win = Rate.of(round(dw.mean * dw.n), dw.n, count(moments["clusters"])) if dw.n else None
    return {
        "win": h.win,
        "huangzhuang": h.huang,
        "dealer_win": dealer_win,
        "dealer_adv": m["dealer_adv"],
        "zimo": h.zimo,
        "huxi": m["huxi"],
        "score": m["score"],
        "decisions_per_hand": decisions_per_hand(length),
    }


def _cell(value: str, interval: str) -> str:
    return value if interval == "–" else f"{value} [{interval}]"


def _value(name: str, x: Figure) -> tuple[str, str]:
    """A figure as the page shows it: ``value [95 % interval]``, and its n (with what it
    counts)."""
    if x is None or (x.n == 0 if isinstance(x, Rate) else math.isnan(x.mean)):
        return "–", "–"
    n = f"{x.n:,} {LABELS[name][1]}"
    if isinstance(x, Rate):
        return _cell(fmt_rate(x), fmt_interval(x)), n
    if name in _POINTS:
        lo = "–" if math.isnan(x.lo) else f"{100 * x.lo:+.1f} – {100 * x.hi:+.1f} pp"
        return _cell(f"{100 * x.mean:+.1f} pp", lo), n
    return _cell(fmt_mean(x), fmt_interval(x)), n


def difference(a: Figure, b: Figure) -> Mean | None:
    """``a − b`` of two independent figures of one kind, None when either is missing."""
    if isinstance(a, Rate) and isinstance(b, Rate):
        return rate_diff(a, b)
    if isinstance(a, Mean) and isinstance(b, Mean):
        return mean_diff(a, b)
    return None


def _diff(name: str, d: Mean | None, rate: bool) -> tuple[str, str]:
    """A difference as the page shows it (``+1.23 pp [-0.40 – +2.86 pp]``), and whether it
    differs: ``yes`` when its interval excludes 0."""
    if d is None or math.isnan(d.mean) or math.isnan(d.lo):
        return "–", "–"
    differs = "yes" if d.lo > 0 or d.hi < 0 else "no"
    if rate or name in _POINTS:
        pp = f"{100 * d.lo:+.2f} – {100 * d.hi:+.2f} pp"
        return _cell(f"{100 * d.mean:+.2f} pp", pp), differs
    return _cell(f"{d.mean:+.2f}", f"{d.lo:+.2f} – {d.hi:+.2f}"), differs


def comparison_table(mine: Mapping[str, Figure], ref: Mapping[str, Figure]) -> pd.DataFrame:
    """One row per figure either side has: the selection's value with its 95 % interval,
    the reference's, the difference selection − reference with its interval, whether it
    differs (the interval excludes 0), and what each side's figure rests on."""
    rows = []
    for name in FIGURES:
        a, b = mine.get(name), ref.get(name)
        if a is None and b is None:
            continue
        va, na = _value(name, a)
        vb, nb = _value(name, b)
        d, differs = _diff(name, difference(a, b), isinstance(a, Rate))
        rows.append({
            "figure": LABELS[name][0], "selection": va, "reference": vb,
            "selection − reference": d, "differs": differs,
            "selection n": na, "reference n": nb,
        })  # fmt: skip
    return pd.DataFrame(rows)


def file_label(path: Path, root: Path, cwd: str | None = None) -> str:
    """How the page names the reference file: relative to the repository ``root`` or to the
    working directory when inside one, else ``…/`` and its name (never the server's absolute
    path).

    >>> file_label(Path("/r/docs/reference/reference.json"), Path("/r"))
    'docs/reference/reference.json'
    >>> file_label(Path("/tmp/x/ref.json"), Path("/r"), cwd="/home")
    '…/ref.json'
    """
    p = Path(os.path.abspath(path))
    for base in (root, Path(cwd if cwd is not None else os.getcwd())):
        try:
            return str(p.relative_to(Path(os.path.abspath(base))))
        except ValueError:
            continue
    return f"…/{p.name}"
