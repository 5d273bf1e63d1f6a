"""``paohuzi distill``: a ``learned`` table taught by search, round after round (expert
iteration; replay.distill, docs/DISTILL.md)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.errors import input_error
from paohuzi.cli.locks import folder_lock
from paohuzi.cli.tune import NOT_RESULT, command_line
from replay.distill.rounds import MIN_VALIDATION


def default_baseline(preset: str) -> str:
    """``heuristic@tuned-PRESET`` when that set is shipped, else ``heuristic``."""
    from engine.policies import weights as W

    name = f"tuned-{preset.strip().lower()}"
    return f"heuristic@{name}" if name in W.shipped_names("heuristic") else "heuristic"


def start_table(spec: str | None, baseline_table: Any) -> Any:
    """The learned table to start from: ``--start`` (a learned weights file or set,
    ``learned@…``, or a ``heuristic@…`` table turned into the learned table that scores as
    it does), else the baseline's heuristic table so turned, else the defaults."""
    from engine.policies import weights as W
    from engine.policies.learned import from_heuristic

    if spec is None:
        if baseline_table is not None and baseline_table.policy == "heuristic":
            return from_heuristic(baseline_table)
        return W.DEFAULT_LEARNED
    text = spec.strip()
    if not W.is_weighted_spec(text):
        text = f"learned@{text}"
    table = W.load_spec(text)
    if table.policy == "heuristic":
        return from_heuristic(table)
    if table.policy != "learned":
        raise input_error(f"--start {spec}: a {table.policy} table, not a learned or heuristic one")
    return table


def teacher_rollouts(spec: str) -> int:
    """N of ``--teacher search@N`` (the search's own rollout policy is the apprentice)."""
    from engine.errors import InvalidNotation
    from engine.policies.search_policy import parse_spec

    text = spec.strip()
    if "/" in text:
        raise input_error(
            f"--teacher {spec}: give search@N; its rollouts are played by the apprentice"
        )
    try:
        rollouts, _ = parse_spec(text)
    except InvalidNotation as e:
        raise input_error(f"--teacher {spec}: {e}") from None
    return int(rollouts)


@click.command(short_help="Teach a learned policy by search (expert iteration).")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--rules", "-r", default="hunan", show_default=True, help="Rule preset.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a rule switch (repeatable).")  # fmt: skip
@click.option("--teacher", default="search@64", show_default=True, metavar="search@N",
              help="The search whose option values teach (N rollouts per option).")  # fmt: skip
@click.option("--start", "start_spec", metavar="WEIGHTS", default=None,
              help="The table to start from: learned or heuristic weights (a file, a shipped"
              " set, POLICY@WEIGHTS; default: the baseline's table, else the defaults).")  # fmt: skip
@click.option("--baseline", default=None, metavar="POLICY",
              show_default="heuristic@tuned-PRESET when shipped, else heuristic",
              help="Who each round's table is validated against.")  # fmt: skip
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=0, show_default=True,
              help="Seed of the hands, the samples and the deals: the same seed, the same result.")  # fmt: skip
@click.option("--rounds", type=click.IntRange(1, 100), default=4, show_default=True,
              help="Rounds in all (a resumed run counts the earlier ones).")  # fmt: skip
@click.option("--hands", type=click.IntRange(1, 10_000_000), default=3000, show_default=True,
              help="Self-play hands per round whose decisions the search values.")  # fmt: skip
@click.option("--sample", type=click.FloatRange(0, 1, min_open=True), default=0.3,
              show_default=True, help="Share of those decisions valued.")  # fmt: skip
@click.option("--chunk-hands", type=click.IntRange(1, 10_000), default=50, show_default=True,
              help="Hands per teacher-data file (the unit of work and of resuming).")  # fmt: skip
@click.option("--validation-deals", type=click.IntRange(1, 10_000_000), default=20_000,
              show_default=True, help=f"Fresh deals each round is validated on (at least {MIN_VALIDATION}).")  # fmt: skip
@click.option("--final-deals", type=click.IntRange(1, 10_000_000), default=20_000,
              show_default=True, help="Fresh deals the best round's table is validated on at the end.")  # fmt: skip
@click.option("--session-length", type=click.IntRange(1, 65535), default=8, show_default=True,
              help="Deals per session (the dealer rules).")  # fmt: skip
@click.option("--l2", type=click.FloatRange(0, 1e6), default=0.0, show_default=True,
              help="Pull of the fit toward the round's starting coefficients.")  # fmt: skip
@click.option("--max-minutes", type=click.FloatRange(0, min_open=True), default=None,
              help="Stop after this long (between steps); run again to go on.")  # fmt: skip
@click.option("--workers", "-w", type=click.IntRange(min=1), default=None,
              show_default="CPU count (of the Ray cluster with --backend ray)",
              help="Processes (the result does not depend on it).")  # fmt: skip
@click.option("--backend", "backend_name", type=click.Choice(["local", "ray"]), default="local",
              show_default=True, help="This machine's process pool, or Ray tasks.")  # fmt: skip
@click.option("--address", metavar="ADDR", default=None,
              help="With --backend ray: a running cluster ('auto' or HOST:PORT).")  # fmt: skip
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def distill(
    out: Path,
    rules: str,
    overrides: tuple[str, ...],
    teacher: str,
    start_spec: str | None,
    baseline: str | None,
    seed: int,
    rounds: int,
    hands: int,
    sample: float,
    chunk_hands: int,
    validation_deals: int,
    final_deals: int,
    session_length: int,
    l2: float,
    max_minutes: float | None,
    workers: int | None,
    backend_name: str,
    address: str | None,
    quiet: bool,
) -> None:
    """Teach a learned policy by search, in folder OUT. Each round the current table plays
    --hands hands against itself; the search values the options of a sample of its
    decisions (--teacher search@N, its rollouts played by the table); the coefficients are
    fitted to those values (every round's data so far), and the new table is validated
    against --baseline on fresh duplicate deals. The best round's table is validated once
    more on --final-deals fresh deals. OUT is a new or empty folder, or one distill made:
    it gets learned.json (play it as learned@OUT/learned.json), report.md with curve.svg,
    report.json, the teacher data (data/) and the checkpoint: the same command resumes
    after Ctrl-C or a kill, and gives the same result for a seed.

    \b
    paohuzi distill distill/hunan --teacher search@64 --rounds 4
    paohuzi distill distill/4p -r hunan-4p --max-minutes 30
    paohuzi simulate -n 5000 --duplicate -p learned@distill/hunan/learned.json,heuristic,heuristic
    """
    from engine.errors import PaohuziError
    from engine.policies import load_policy, refuse_plugin
    from engine.policies import weights as W
    from engine.rules import find_rules
    from replay.distill.rounds import DistillError, Settings
    from replay.record.fast_engine import unsupported
    from replay.tune.folder import Owner, claim

    # --max-minutes only says when this invocation stops
    command = command_line(click.get_current_context(), (*NOT_RESULT, "max_minutes"))
    try:
        ruleset = find_rules(rules).with_overrides(overrides)
        base = (baseline or default_baseline(rules)).strip()
        base_table = None
        if W.is_weighted_spec(base):
            base = W.canonical(base)
            base_table = W.load_spec(base)
        else:
            # a module:Class is refused before it is imported (the compiled engine plays none)
            refuse_plugin(
                base,
                "--baseline",
                "distill plays the compiled engine: a plug-in has no compiled version",
            )
            load_policy(base, plugins=False)
        settings = Settings(
            rules=ruleset,
            start=start_table(start_spec, base_table),
            baseline=base,
            baseline_table=base_table,
            rollouts=teacher_rollouts(teacher),
            seed=seed,
            rounds=rounds,
            hands=hands,
            chunk_hands=chunk_hands,
            sample=sample,
            validation_deals=validation_deals,
            final_deals=final_deals,
            session_length=session_length,
            l2=l2,
            rules_label=" ".join([rules, *(f"--set {o}" for o in overrides)]),
        )
        why = unsupported(settings.duel().spec(settings.start, seed, 1))
        if why:
            raise input_error(f"--baseline {settings.baseline}: {why}")
        owner = Owner("distill", "distillation", "paohuzi-distill.json", "paohuzi-distill",
                      DistillError)  # fmt: skip
        out = claim(out, owner)  # before the lock: nothing is written into a folder not ours
    except PaohuziError as e:
        raise input_error(str(e)) from None
    with folder_lock(out, "distill"):
        _run(settings, out, max_minutes, workers, backend_name, address, quiet, command)


def _run(
    settings: Any, out: Path, max_minutes: float | None, workers: int | None,
    backend_name: str, address: str | None, quiet: bool, command: str,
) -> None:  # fmt: skip
    from engine.errors import PaohuziError
    from replay.distill import report
    from replay.distill import rounds as R
    from replay.record.fast_engine import warm_up
    from replay.tune.evaluate import open_evaluator
    from replay.tune.report import _ci

    try:
        state0 = R.load(out, settings)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    done0 = 0 if state0 is None else len(state0.rounds)
    warm_up(settings.duel().spec(settings.start, settings.seed, 1), say=not quiet)
    try:
        evaluator = open_evaluator(settings.duel(), workers, backend_name, address)
    except PaohuziError as e:
        raise input_error(str(e)) from None

    def say(text: str) -> None:
        if not quiet:
            click.echo(f"distill: {text}", err=True)

    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if not quiet and sys.stderr.isatty() and (now - last[0] > 0.5 or done == total):
            last[0] = now
            click.echo(f"\r  {done}/{total} tasks", err=True, nl=done == total)

    def round_done(rd: R.Round) -> None:
        a, b = rd.before, rd.after
        say(
            f"round {rd.r + 1}/{settings.rounds}: {rd.decisions['discard'] + rd.decisions['claim']:,}"
            f" decisions; regret (points per decision) discard {a['discard']['regret']:.3f} →"
            f" {b['discard']['regret']:.3f}, claim {a['claim']['regret']:.3f} →"
            f" {b['claim']['regret']:.3f}; against {settings.baseline}"
            f" {_ci(rd.validation.score_ci)} score per hand"
        )

    hooks = R.Hooks(
        step=lambda r, what: (
            say(f"round {r + 1}/{settings.rounds}: {what}") if r < settings.rounds else say(what)
        ),
        progress=progress,
        round_done=round_done,
    )
    say(
        f"teacher search@{settings.rollouts}, {settings.hands:,} hands a round, baseline"
        f" {settings.baseline}; {'resuming at' if done0 else 'starting at'} round"
        f" {done0 + 1} of {settings.rounds}, on {evaluator.describe()}"
    )
    t0 = time.monotonic()
    try:
        with evaluator:
            state = R.distill(
                settings, out, evaluator, max_minutes, hooks,
                lambda st, se, o: report.write_all(st, se, o, command),
            )  # fmt: skip
    except PaohuziError as e:
        raise input_error(str(e)) from None
    except OSError as e:
        where = e.filename or out
        raise input_error(f"{where}: cannot write it ({e.strerror or e})") from None
    except KeyboardInterrupt:
        click.echo(
            f"distill interrupted: the rounds and teacher data made are kept in {out}; run the"
            " same command to go on",
            err=True,
        )
        raise SystemExit(130) from None
    wall = time.monotonic() - t0
    lines = [f"{len(state.rounds)} rounds ({len(state.rounds) - done0} now, {wall:,.0f} s)"]
    if state.final is None:
        lines.append(f"stopped by {state.stop_reason}: run the same command to go on")
    else:
        f = state.final
        lines.append(
            f"round {(state.best or 0) + 1}'s table on {f.deals:,} fresh deals against"
            f" {settings.baseline}:"
            f" score per hand {_ci(f.score_ci)} ({f.verdict})"
        )
    if state.rounds:
        lines.append(
            f"table: {out / R.RESULT} (play it as learned@{out / R.RESULT}); report:"
            f" {out / report.REPORT_MD}"
        )
    click.echo("\n".join(lines))
