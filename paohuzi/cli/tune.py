"""``paohuzi tune``: CMA-ES over a policy's weights, by duplicate self-play against a baseline
(replay.tune; docs/TUNING.md)."""

from __future__ import annotations

import math
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.errors import input_error
from paohuzi.cli.locks import folder_lock
from replay.tune.limits import MIN_VALIDATION

#: The policies with weights (engine.policies.weights.WEIGHTED, not imported here so that
#: ``--help`` stays cheap; a test holds them equal).
TUNED_POLICIES = ("heuristic", "greedy", "learned")


def default_popsize(dim: int) -> int:
    """CMA-ES's default population, 4 + ⌊3 ln n⌋ (Hansen)."""
    return 4 + int(3 * math.log(max(1, dim)))


def start_table(spec: str, policy: str) -> Any:
    """The table ``--start`` names: a weights file (a path with ``/`` or ending in ``.json``)
    or a shipped set of ``policy`` (``default``, ``tuned-hunan``), or ``POLICY@WEIGHTS`` as
    ``--baseline`` takes it; one line for anything else."""
    from engine.errors import InvalidNotation
    from engine.policies import weights as W

    text = spec.strip()
    if W.is_weighted_spec(text):
        table = W.load_spec(text)
    else:
        try:
            _, weights, is_file = W.parse_spec(f"{policy}@{text}")
            path = Path(weights) if is_file else W.shipped_path(policy, weights)
        except InvalidNotation:
            have = ", ".join(W.shipped_names(policy)) or "none"
            raise input_error(
                f"--start {spec[:60]!r}: neither a weights file (a path with '/' or ending in"
                f" .json) nor a shipped {policy} set ({have})"
            ) from None
        table = W.read_weights(path, policy, shown=weights if is_file else path.name)
    if table.policy != policy:
        raise input_error(f"--start {spec}: a {table.policy} table, not {policy}'s")
    return table


#: The options that do not change a tuning or distillation's result (left out of its command).
NOT_RESULT = ("workers", "backend_name", "address", "quiet")


def command_line(ctx: click.Context, skip: tuple[str, ...] = NOT_RESULT) -> str:
    """``paohuzi COMMAND OUT`` and every option given a value other than its default (what the
    weights file and the report name as the command that made them; the options ``skip``,
    which do not change the result, left out)."""
    words = ["paohuzi", ctx.command.name or "", str(ctx.params["out"])]
    for p in ctx.command.params:
        if not isinstance(p, click.Option) or p.name in skip:
            continue
        v = ctx.params.get(p.name)
        if v is None or v == p.default or (p.multiple and not v):
            continue
        flag = max(p.opts, key=len)
        for item in v if p.multiple else [v]:
            words += [flag, str(item)]
    return shlex.join(words)


class Bar:
    """Progress on stderr: a rich bar over the generations on a terminal (generation, best
    fitness and its interval, the mean's), a line per generation otherwise."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.bar: Any = None
        self.task: Any = None
        self.start = time.monotonic()

    def __enter__(self) -> Bar:
        if self.enabled and self.tty:
            from rich.progress import TextColumn, TimeElapsedColumn

            from paohuzi.cli.progress import rich_bar

            self.bar = rich_bar(
                "tune",
                TextColumn("generation {task.completed}/{task.total}"),
                TextColumn("{task.fields[text]}"),
                TimeElapsedColumn(),
            )
            self.bar.__enter__()
            self.task = self.bar.add_task("tune", total=self.total, text="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def start_at(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=done)

    def step(self, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, text=f"playing {done}/{total} tasks")

    def generation(self, rec: Any) -> None:
        from replay.tune.report import _ci

        text = f"best {_ci(rec.best_ci, 2)}, mean {_ci(rec.mean_ci, 2)} score/hand"
        if self.bar is not None:
            self.bar.update(self.task, completed=rec.g + 1, text=text)
        elif self.enabled:
            click.echo(
                f"tune: generation {rec.g + 1}/{self.total}: {text} ({rec.seconds:.1f} s)",
                err=True,
            )


@click.command(short_help="Tune a policy's weights by CMA-ES over duplicate self-play.")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--rules", "-r", default="hunan", show_default=True, help="Rule preset.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a rule switch (repeatable).")  # fmt: skip
@click.option("--policy", type=click.Choice(TUNED_POLICIES), default="heuristic",
              show_default=True, help="The policy whose weights are tuned (learned: its feature"
              " parameters and coefficients).")  # fmt: skip
@click.option("--start", "start_spec", metavar="WEIGHTS", default=None,
              help="The table to start from: a weights file (a path with '/' or ending in"
              " .json) or shipped set such as tuned-hunan (default: the policy's defaults).")  # fmt: skip
@click.option("--baseline", default="heuristic", show_default=True, metavar="POLICY",
              help="Who the candidates play against: random, greedy, heuristic or"
              " POLICY@WEIGHTS.")  # fmt: skip
@click.option("--params", "params_text", metavar="NAMES", default=None,
              help="Parameters to tune, comma-separated, or 'all' (default: every non-flag"
              " parameter but ready_max_hand).")  # fmt: skip
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=0, show_default=True,
              help="Seed of the deals and the optimizer: the same seed, the same result.")  # fmt: skip
@click.option("--generations", "-g", type=click.IntRange(1, 10_000), default=40,
              show_default=True, help="Generations in all (a resumed run counts the earlier"
              " ones: raise it to go on).")  # fmt: skip
@click.option("--popsize", type=click.IntRange(2, 1_000), default=None,
              show_default="4 + 3 ln(parameters)", help="Candidates per generation.")  # fmt: skip
@click.option("--deals", type=click.IntRange(1, 1_000_000), default=1000, show_default=True,
              help="Duplicate deals per candidate per generation (common to the generation).")  # fmt: skip
@click.option("--validation-deals", type=click.IntRange(1, 10_000_000), default=5000,
              show_default=True, help=f"Fresh deals the result is validated on (at least {MIN_VALIDATION}).")  # fmt: skip
@click.option("--sigma0", type=click.FloatRange(0, 10, min_open=True), default=0.2,
              show_default=True, help="Initial step size, relative to each parameter's start.")  # fmt: skip
@click.option("--session-length", type=click.IntRange(1, 65535), default=8, show_default=True,
              help="Deals per session (the dealer rules).")  # fmt: skip
@click.option("--max-minutes", type=click.FloatRange(0, min_open=True), default=None,
              help="Stop tuning after this long (between generations), then validate;"
              " run again to go on.")  # fmt: skip
@click.option("--workers", "-w", type=click.IntRange(min=1), default=None,
              show_default="CPU count (of the Ray cluster with --backend ray)",
              help="Processes (the result does not depend on it).")  # fmt: skip
@click.option("--backend", "backend_name", type=click.Choice(["local", "ray"]), default="local",
              show_default=True, help="This machine's process pool, or Ray tasks.")  # fmt: skip
@click.option("--address", metavar="ADDR", default=None,
              help="With --backend ray: a running cluster ('auto' or HOST:PORT).")  # fmt: skip
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def tune(
    out: Path,
    rules: str,
    overrides: tuple[str, ...],
    policy: str,
    start_spec: str | None,
    baseline: str,
    params_text: str | None,
    seed: int,
    generations: int,
    popsize: int | None,
    deals: int,
    validation_deals: int,
    sigma0: float,
    session_length: int,
    max_minutes: float | None,
    workers: int | None,
    backend_name: str,
    address: str | None,
    quiet: bool,
) -> None:
    """Tune POLICY's weights by CMA-ES, in folder OUT: each generation, every candidate
    plays --deals duplicate deals against --baseline (the same deals for the whole
    generation, in every seat); its fitness is its mean score per hand minus the baseline's.
    The result (the optimizer's mean) is then played on --validation-deals fresh deals and
    called better only when the 95 % interval is above 0. OUT is a new or empty folder, or
    one tune made (it writes nowhere else): it gets weights.json (play it as
    POLICY@OUT/weights.json), report.md with fitness.svg, report.json and the checkpoint:
    the same command resumes after Ctrl-C or a kill, and gives the same result for a seed.

    \b
    paohuzi tune tunes/hunan --generations 40 --deals 1000
    paohuzi tune tunes/min10 --set min_huxi=10 --max-minutes 30
    paohuzi simulate -n 5000 --duplicate -p heuristic@tunes/hunan/weights.json,heuristic
    """
    from engine.errors import PaohuziError
    from engine.policies import weights as W
    from engine.rules import find_rules
    from replay.record.fast_engine import unsupported
    from replay.tune import optimizer as O
    from replay.tune.folder import claim
    from replay.tune.report import write_all
    from replay.tune.space import Space, parse_params

    command = command_line(click.get_current_context())
    try:
        ruleset = find_rules(rules).with_overrides(overrides)
        start = start_table(start_spec, policy) if start_spec else W.defaults(policy)
        names = parse_params(params_text, policy)
        Space.of(policy, start, names)
        base = baseline.strip()
        base_table = None
        if W.is_weighted_spec(base):
            base = W.canonical(base)
            base_table = W.load_spec(base)
        else:
            from engine.policies import load_policy, refuse_plugin

            # a module:Class is refused before it is imported (the compiled engine plays none)
            refuse_plugin(
                base,
                "--baseline",
                "tune plays the compiled engine: a plug-in has no compiled version",
            )
            load_policy(base, plugins=False)
        settings = O.Settings(
            rules=ruleset,
            policy=policy,
            baseline=base,
            baseline_table=base_table,
            start=start,
            params=names,
            seed=seed,
            deals=deals,
            popsize=popsize or default_popsize(len(names)),
            sigma0=sigma0,
            validation_deals=validation_deals,
            session_length=session_length,
            rules_label=" ".join([rules, *(f"--set {o}" for o in overrides)]),
        )
        why = unsupported(settings.duel().spec(start, seed, 1))  # the rules hold
        if why:
            raise input_error(f"--baseline {settings.baseline}: {why}")
        budget = O.Budget(generations, max_minutes)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    try:
        out = claim(out)  # before the lock: nothing is written into a folder not tune's
    except PaohuziError as e:
        raise input_error(str(e)) from None
    with folder_lock(out, "tune"):
        _run(settings, budget, out, workers, backend_name, address, quiet, command, write_all)


def _run(
    settings: Any, budget: Any, out: Path, workers: int | None, backend_name: str,
    address: str | None, quiet: bool, command: str, write_all: Any,
) -> None:  # fmt: skip
    from engine.errors import PaohuziError
    from replay.record.fast_engine import warm_up
    from replay.tune import optimizer as O
    from replay.tune.evaluate import open_evaluator
    from replay.tune.report import REPORT_MD, _ci, points

    spec = settings.duel().spec(settings.start, settings.seed, 1)
    try:
        state0 = O.load(out, settings)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    done0 = 0 if state0 is None else len(state0.history)
    warm_up(spec, say=not quiet)
    try:
        evaluator = open_evaluator(settings.duel(), workers, backend_name, address)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    if not quiet:
        what = "resuming at generation" if done0 else "starting at generation"
        click.echo(
            f"tune: {settings.policy} ({len(settings.params)} parameters) against"
            f" {settings.baseline}, {settings.popsize} candidates × {settings.deals:,} deals,"
            f" {what} {done0 + 1} of {budget.generations}, on {evaluator.describe()}",
            err=True,
        )
    t0 = time.monotonic()
    try:
        with evaluator, Bar(budget.generations, not quiet) as bar:
            bar.start_at(done0)
            state = O.tune(
                settings, budget, out, evaluator, bar.generation, bar.step,
                lambda st, se, o: write_all(st, se, o, command), state0,
            )  # fmt: skip
    except PaohuziError as e:
        raise input_error(str(e)) from None
    except KeyboardInterrupt:
        click.echo(
            f"tune interrupted: {O.saved_generations(out)} generation(s) kept in {out}; run the"
            " same command to go on",
            err=True,
        )
        raise SystemExit(130) from None
    v = state.validation
    assert v is not None  # tune() always ends validated
    wall = time.monotonic() - t0
    evals = sum(len(g.fitness) + 1 for g in state.history[done0:])
    lines = [
        f"{len(state.history)} generations ({len(state.history) - done0} now, {wall:,.0f} s,"
        f" {evals / wall if wall else 0:.2f} evaluations/s)"
        + (f"; stopped by {state.stop_reason}" if state.stop_reason else ""),
        f"validation on {v.deals:,} fresh deals against {settings.baseline}: score per hand"
        f" {_ci(v.score_ci)}, win rate {_ci(points(v.win_ci), 2)} points",
    ]
    if v.verdict == "better":
        lines.append(f"better than {settings.baseline}: the whole interval is above 0")
    elif v.verdict == "worse":
        lines.append(f"worse than {settings.baseline}: the whole interval is below 0")
    else:
        lines.append(f"not shown better than {settings.baseline}: the interval includes 0")
    lines.append(
        f"weights: {out / O.WEIGHTS} (play it as {settings.policy}@{out / O.WEIGHTS});"
        f" report: {out / REPORT_MD}"
    )
    click.echo("\n".join(lines))
