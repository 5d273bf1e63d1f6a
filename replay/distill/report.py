"""What a distillation writes besides its checkpoint and data.

* ``learned.json`` — the best round's table as a weights file (``learned@OUT/learned.json``),
  its ``about`` naming the command, the rounds and the final validation;
* ``report.json`` — settings, every round's record, the final validation (rounds numbered
  from 0 there, ``r``, as in the checkpoint and the data folders ``round-000`` …; from 1 in
  the report and on the terminal);
* ``report.md`` — the same for people: the final verdict, a table of the rounds (teacher
  data, agreement and regret on held-out decisions before and after training, the paired
  strength against the baseline), the learning curve ``curve.svg`` (each round's strength
  with its 95 % interval) and the coefficients beside the start's.

Every file is written atomically; the same run gives the same bytes but for the wall times.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.policies import weights as W
from replay.distill.rounds import RESULT, Round, Settings, State
from replay.store.files import atomic_write
from replay.tune.report import _ci, band_svg

REPORT_MD = "report.md"
REPORT_JSON = "report.json"
PLOT = "curve.svg"


def write_all(state: State, settings: Settings, out: Path, command: str = "") -> None:
    best = state.best_round()
    if best is None:
        return
    table = best.weights()
    doc = W.weights_document(table, about(state, settings, command))
    atomic_write(out / RESULT, _json(doc))
    atomic_write(out / REPORT_JSON, _json(report_doc(state, settings, command)))
    atomic_write(out / PLOT, svg(state.rounds).encode())
    atomic_write(out / REPORT_MD, markdown(state, settings, table, command).encode())


def _json(doc: Any) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode()


def _rules(settings: Settings) -> str:
    if settings.rules_label:
        return settings.rules_label
    return settings.rules.preset_name() or f"rules {settings.rules.fingerprint()}"


def about(state: State, settings: Settings, command: str) -> str:
    best = state.best_round()
    assert best is not None
    parts = [
        f"distilled from search@{settings.rollouts} over {len(state.rounds)} rounds of"
        f" {settings.hands:,} self-play hands on {_rules(settings)}; round {best.r + 1}'s table"
    ]
    if state.final is not None and state.best == best.r:
        parts.append(
            f"against {settings.baseline} on {state.final.deals:,} fresh duplicate deals:"
            f" {_ci(state.final.score_ci)} score per hand ({state.final.verdict})"
        )
    if command:
        parts.append(f"made by: {command}")
    return "; ".join(parts)


def report_doc(state: State, settings: Settings, command: str) -> dict[str, Any]:
    return {
        "command": command,
        "settings": state.identity,
        "rounds": [rd.to_dict() for rd in state.rounds],
        "best": state.best,
        "final": None if state.final is None else {
            **state.final.__dict__, "verdict": state.final.verdict
        },
        "stop_reason": state.stop_reason,
    }  # fmt: skip


def svg(rounds: list[Round]) -> str:
    return band_svg(
        [rd.validation.score_ci for rd in rounds],
        [],
        "strength per round: score per hand against the baseline (mean ± 95 %)",
        "round",
    )


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def markdown(state: State, settings: Settings, table: W.PolicyWeights, command: str) -> str:
    s = settings
    lines = [f"# Distillation: `learned` on {_rules(s)}", ""]
    if command:
        lines += [f"Command: `{command}`", ""]
    lines += [
        f"Teacher: `search@{s.rollouts}` (its option values, rollouts by the apprentice)."
        f" {s.rounds} rounds of {s.hands:,} self-play hands, a decision sampled with"
        f" probability {s.sample:g}; baseline `{s.baseline}`; seed {s.seed}.",
        "",
    ]
    f = state.final
    if f is not None:
        lines += [
            f"**Result** (round {(state.best or 0) + 1}'s table, `learned.json`): against"
            f" `{s.baseline}` on"
            f" {f.deals:,} fresh duplicate deals, **{_ci(f.score_ci)}** score per hand"
            f" ({f.verdict}); win rate {_ci(tuple(100 * v for v in f.win_ci), 2)} points"  # type: ignore[arg-type]
            f" ({f.seconds:.0f} s).",
            "",
        ]
    elif state.stop_reason:
        lines += [f"Stopped by {state.stop_reason}; run the same command again to go on.", ""]
    lines += [
        "| round | decisions (discard / claim) | agreement before → after | regret before →"
        " after (points) | against the baseline (score per hand) | seconds (data / train /"
        " validation) |",
        "|---|---|---|---|---|---|",
    ]
    for rd in state.rounds:
        agree = " · ".join(
            f"{k} {_pct(rd.before[k]['agreement'])} → {_pct(rd.after[k]['agreement'])}"
            for k in ("discard", "claim")
        )
        regret = " · ".join(
            f"{k} {rd.before[k]['regret']:.3f} → {rd.after[k]['regret']:.3f}"
            for k in ("discard", "claim")
        )
        sec = " / ".join(f"{rd.seconds.get(k, 0):.0f}" for k in ("data", "train", "validation"))
        lines.append(
            f"| {rd.r + 1} | {rd.decisions['discard']:,} / {rd.decisions['claim']:,} | {agree} |"
            f" {regret} | {_ci(rd.validation.score_ci)} ({rd.validation.deals:,} deals) | {sec} |"
        )
    lines += [
        "",
        "Agreement: how often the table's choice is the search's best option; regret: the mean"
        " value its choice gives up, as the search values the options (both on the round's"
        " held-out decisions, before and after training).",
        "",
        f"![strength per round]({PLOT})",
        "",
        "## Coefficients",
        "",
        "| coefficient | start | result |",
        "|---|---|---|",
    ]
    for p in W.PARAMS:
        if p.policy == "learned":
            lines.append(f"| `{p.name}` | {s.start[p.name]:g} | {table[p.name]:g} |")
    return "\n".join(lines) + "\n"
