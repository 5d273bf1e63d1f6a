"""What a tuning run writes besides its checkpoint: the weights and the report.

* ``weights.json`` — the current mean as a weights file, its ``about`` naming the command,
  the generations and the validation;
* ``report.json`` — settings, every generation, the validation, the table;
* ``report.md`` — the same for people: the validation, the fitness per generation as a table
  and as ``fitness.svg`` (a plain SVG line chart, no plotting library: the current mean's
  fitness with its 95 % interval as a band, each generation's best candidate as a dot).

Every file is written atomically; the same run gives the same bytes but for the wall times.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.policies import weights as W
from replay.store.files import atomic_write
from replay.tune.optimizer import WEIGHTS, Generation, Settings, State

REPORT_MD = "report.md"
REPORT_JSON = "report.json"
PLOT = "fitness.svg"


def write_all(state: State, settings: Settings, out: Path, command: str = "") -> None:
    space = settings.space()
    table = state.table(space)
    atomic_write(out / WEIGHTS, weights_bytes(state, settings, table, command))
    atomic_write(out / REPORT_JSON, _json(report_doc(state, settings, table, command)))
    atomic_write(out / PLOT, svg(state.history).encode())
    atomic_write(out / REPORT_MD, markdown(state, settings, table, command).encode())


def _json(doc: Any) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode()


def _ci(t: tuple[float, float, float], digits: int = 3) -> str:
    m, lo, hi = t
    return f"{m:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def points(t: tuple[float, float, float]) -> tuple[float, float, float]:
    """A rate's (mean, lo, hi) in percentage points."""
    return (100 * t[0], 100 * t[1], 100 * t[2])


def about(state: State, settings: Settings, command: str) -> str:
    n = len(state.history)
    parts = [
        f"tuned by CMA-ES over {n} generations of {settings.popsize} candidates,"
        f" {settings.deals:,} duplicate deals each, against {settings.baseline} on"
        f" {_rules_label(settings)}"
    ]
    v = state.validation
    if v is not None and v.generations == n:
        parts.append(
            f"validation on {v.deals:,} fresh deals: {_ci(v.score_ci)} score per hand ({v.verdict})"
        )
    if command:
        parts.append(f"made by: {command}")
    return "; ".join(parts)


def _rules_label(settings: Settings) -> str:
    if settings.rules_label:
        return settings.rules_label
    name = settings.rules.preset_name()
    return name if name else f"rules {settings.rules.fingerprint()}"


def weights_bytes(state: State, settings: Settings, table: W.PolicyWeights, command: str) -> bytes:
    return _json(W.weights_document(table, about(state, settings, command)))


def report_doc(
    state: State, settings: Settings, table: W.PolicyWeights, command: str
) -> dict[str, Any]:
    return {
        "command": command,
        "settings": state.identity,
        "stopped_by": state.stop_reason or None,
        "generations": [g.to_dict() for g in state.history],
        "validation": None if state.validation is None else state.validation.to_dict(),
        "weights": table.as_dict(),
    }


def markdown(state: State, settings: Settings, table: W.PolicyWeights, command: str) -> str:
    hist = state.history
    lines = [
        f"# Tuning {settings.policy} against {settings.baseline} ({_rules_label(settings)})",
        "",
    ]
    if command:
        lines += [f"    {command}", ""]
    evals = sum(len(g.fitness) + 1 for g in hist)
    secs = sum(g.seconds for g in hist)
    hands = evals * settings.deals * settings.rules.players
    lines.append(
        f"{len(hist)} generations of {settings.popsize} candidates (and the mean), "
        f"{settings.deals:,} duplicate deals each ({settings.rules.players} hands a deal),"
        f" seed {settings.seed}: {evals:,} evaluations, {hands:,} hands in {secs:,.0f} s"
        + (f" ({evals / secs:.2f} evaluations/s, {hands / secs:,.0f} hands/s)" if secs else "")
        + "."
    )
    if state.stop_reason:
        lines.append(f"Stopped by {state.stop_reason}.")
    v = state.validation
    lines.append("")
    if v is not None:
        lines += [
            "## Validation",
            "",
            f"The final mean against {settings.baseline} on {v.deals:,} fresh duplicate deals"
            f" (seed {v.seed}, never tuned on): score per hand {_ci(v.score_ci)}, win rate"
            f" {_ci(points(v.win_ci), 2)} points — **{v.verdict}**"
            + (" (the interval includes 0)" if v.verdict == "not shown different" else "")
            + ".",
            "",
        ]
    lines += [
        "## Fitness per generation",
        "",
        f"![fitness per generation]({PLOT})",
        "",
        "Fitness: the paired difference in mean score per hand against the baseline on the"
        " generation's deals (95 % intervals). The mean is the optimizer's current solution,"
        " played on the same deals as the candidates; the best candidate's figure is biased"
        " upwards by the choice.",
        "",
        "| generation | mean | best candidate | population mean | σ | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for g in hist:
        pop = sum(g.fitness) / len(g.fitness)
        lines.append(
            f"| {g.g} | {_ci(g.mean_ci)} | {_ci(g.best_ci)} | {pop:+.3f} | {g.sigma:.4f} |"
            f" {g.seconds:.1f} |"
        )
    lines += ["", "## Weights", "", "| parameter | start | tuned |", "|---|---|---|"]
    for param in W.policy_params(settings.start.policy):  # every one (as_dict omits LATE 0s)
        name = param.name
        v0, v1 = settings.start[name], table[name]
        mark = "" if name in settings.params else " (not tuned)"
        lines.append(f"| `{name}`{mark} | {_num(v0)} | {_num(v1)} |")
    return "\n".join(lines) + "\n"


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:g}"


def svg(hist: list[Generation], width: int = 720, height: int = 360) -> str:
    """The fitness curve: the mean's interval as a band and its value as a line, the best
    candidates as dots, the zero line dashed."""
    return band_svg(
        [g.mean_ci for g in hist],
        [g.best_ci[0] for g in hist],
        "fitness per generation: score per hand against the baseline (mean ± 95 %, best"
        " candidate ●)",
        "generation",
        width,
        height,
    )


def band_svg(
    series: list[tuple[float, float, float]],
    dots: list[float],
    title: str,
    xlabel: str,
    width: int = 720,
    height: int = 360,
) -> str:
    """A plain SVG line chart: each point's (mean, lo, hi) as a line in a band, ``dots`` (one
    per point, may be empty) as red dots, the zero line dashed; x is the point's index."""
    left, right, top, bottom = 64, 16, 24, 44
    w, h = width - left - right, height - top - bottom
    ys = [y for t in series for y in (t[1], t[2])] + list(dots) or [0.0, 1.0]
    lo, hi = min(min(ys), 0.0), max(max(ys), 0.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    pad = 0.05 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    n = max(1, len(series) - 1)

    def X(i: float) -> float:
        return round(left + w * i / n, 2)

    def Y(v: float) -> float:
        return round(top + h * (hi - v) / (hi - lo), 2)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="16">{title}</text>',
    ]
    for k in range(6):
        v = lo + (hi - lo) * k / 5
        out.append(
            f'<line x1="{left}" x2="{left + w}" y1="{Y(v)}" y2="{Y(v)}" stroke="#eee"/>'
            f'<text x="{left - 6}" y="{Y(v) + 4}" text-anchor="end">{v:+.2f}</text>'
        )
    out.append(
        f'<line x1="{left}" x2="{left + w}" y1="{Y(0)}" y2="{Y(0)}" stroke="#888"'
        ' stroke-dasharray="4 3"/>'
    )
    if series:
        upper = " ".join(f"{X(i)},{Y(t[2])}" for i, t in enumerate(series))
        lower = " ".join(f"{X(i)},{Y(t[1])}" for i, t in reversed(list(enumerate(series))))
        out.append(f'<polygon points="{upper} {lower}" fill="#4c78a8" fill-opacity="0.2"/>')
        line = " ".join(f"{X(i)},{Y(t[0])}" for i, t in enumerate(series))
        out.append(f'<polyline points="{line}" fill="none" stroke="#4c78a8" stroke-width="2"/>')
        for i, v in enumerate(dots):
            out.append(f'<circle cx="{X(i)}" cy="{Y(v)}" r="2.5" fill="#e45756"/>')
    for k in range(min(len(series), 6)):
        i = round(k * (len(series) - 1) / max(1, min(len(series), 6) - 1))
        out.append(f'<text x="{X(i)}" y="{top + h + 16}" text-anchor="middle">{i}</text>')
    out.append(f'<text x="{left + w / 2}" y="{height - 8}" text-anchor="middle">{xlabel}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
