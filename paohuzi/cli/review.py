"""``paohuzi review``: what each decision of a recorded hand was worth (replay.review.hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from engine.errors import printable
from paohuzi.cli.errors import input_error
from replay.review.defaults import DEFAULT_ROLLOUT_POLICY, DEFAULT_ROLLOUTS
from replay.store.layout import data_option

_MAX_SEED = 2**64 - 1


def _seats(value: str, players: int) -> list[int]:
    if value.strip().lower() == "all":
        return list(range(players))
    try:
        seat = int(value)
    except ValueError:
        raise input_error(f"--seat {value!r}: a seat number or 'all'") from None
    if not 0 <= seat < players:
        raise input_error(f"seat {seat} out of range: seats are 0 … {players - 1}")
    return [seat]


@click.command(short_help="Value every decision of a recorded hand (determinized rollouts).")
@click.argument("run")
@click.argument("hand", type=click.IntRange(min=0), required=False)
@data_option
@click.option(
    "--hands",
    "hand_ids",
    metavar="IDS",
    default=None,
    help="Review these hands (e.g. 1,5,9-12) and print the rates per policy.",
)
@click.option(
    "--sample",
    type=click.IntRange(1, 100_000),
    default=None,
    help="Review K hands of the run drawn by --seed, and print the rates per policy.",
)
@click.option(
    "--workers",
    "-w",
    type=click.IntRange(min=1),
    default=None,
    help="Processes for --hands/--sample (default: the CPU count).",
)
@click.option("--seat", "-s", "seat", default="all", show_default=True,
              help="The seat to review, or 'all'.")  # fmt: skip
@click.option(
    "--rollouts",
    "-N",
    type=click.IntRange(1, 4096),
    default=DEFAULT_ROLLOUTS,
    show_default=True,
    help="Determinizations per decision (each option played out from every one).",
)
@click.option(
    "--rollout-policy",
    type=click.Choice(["random", "greedy", "heuristic"]),
    default=DEFAULT_ROLLOUT_POLICY,
    show_default=True,
    help="Who plays the rollouts (every seat).",
)
@click.option("--seed", type=click.IntRange(0, _MAX_SEED), default=0, show_default=True,
              help="Seed of the rollouts: the same seed, the same review.")  # fmt: skip
@click.option(
    "--engine",
    type=click.Choice(["auto", "fast", "reference"]),
    default="auto",
    show_default=True,
    help="'fast' (and auto): the compiled rollouts; 'reference': the Python engine (the same"
    " numbers, about 30× slower).",
)
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: one JSON object (docs/REVIEW.md).")  # fmt: skip
@click.option("--backend", "backend_name", type=click.Choice(["local", "ray"]), default="local",
              show_default=True, help="--hands/--sample on this machine's process pool, or as"
              " Ray tasks (the same output; --data must be a path every node reaches).")  # fmt: skip
@click.option("--address", metavar="ADDR", default=None,
              help="With --backend ray: a running cluster ('auto' or HOST:PORT).")  # fmt: skip
@click.option("--no-store", "no_store", is_flag=True,
              help="Neither read stored reviews nor store this one (docs/REVIEW.md).")  # fmt: skip
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def review(
    run: str,
    hand: int | None,
    data: Path,
    hand_ids: str | None,
    sample: int | None,
    workers: int | None,
    seat: str,
    rollouts: int,
    rollout_policy: str,
    seed: int,
    engine: str,
    fmt: str,
    backend_name: str,
    address: str | None,
    no_store: bool,
    quiet: bool,
) -> None:
    """Review hand HAND of run RUN: for each decision of the reviewed seats with two or more
    options, every option's win chance and mean score delta (95 % intervals) from
    determinized rollouts that see only what the deciding seat saw; the option played, the
    best one by win chance and by score with what the choice lost against each, and its
    class (inaccuracy, mistake, blunder: 5, 10, 15 points of winning chance given up); then
    per seat the agreement with the best option by score, and by win chance the accuracy,
    the classes and the costliest decisions. With --hands or --sample instead of HAND, many
    hands on all cores and, per policy and kind of decision, the blunder, mistake and
    inaccuracy rates and the mean loss. Reviews are stored in the run folder: the same
    review asked again is read, not computed (other --rollouts, --rollout-policy or --seed
    are stored beside). Ctrl-C stops it.

    \b
    paohuzi review my-run 17
    paohuzi review my-run 17 --seat 0 --rollouts 1024 --format json
    paohuzi review my-run --sample 200 --rollouts 64
    """
    from engine.errors import PaohuziError
    from paohuzi.cli.progress import Progress
    from replay import store
    from replay.replayer.hand import load_hand
    from replay.review.hand import review_hand

    if sum(x is not None for x in (hand, hand_ids, sample)) != 1:
        raise input_error("give one of HAND, --hands IDS or --sample K")
    from replay.store import reviews as S

    key = S.Key(rollouts, rollout_policy, seed)
    try:
        st = store.open_store(data)
        if hand is None:
            _many(st, run, hand_ids, sample, seat, key, engine, workers, fmt, quiet, no_store,
                  backend_name, address)  # fmt: skip
            return
        log = load_hand(st, run, hand)
        seats = _seats(seat, log.rules.players)
        r = st.run(run)
        sr = None if no_store else S.StoredReviews(r.path, r.manifest, key, _warn)
        need = seats if sr is None else S.missing(sr, hand, seats)
        with Progress(f"review {log.where}", not quiet, "review", "decisions") as bar:
            fresh = review_hand(log, need, rollouts, rollout_policy, seed, engine, bar)
        result = fresh if sr is None else S.merge(fresh, seats, sr, hand)
        if sr is not None and need:
            _note(S.store(r.path, key, [(hand, S.mask_of(need), fresh.decisions)]))
    except PaohuziError as e:
        raise input_error(str(e)) from None
    except KeyboardInterrupt:
        click.echo("review interrupted: nothing printed", err=True)
        raise SystemExit(130) from None
    from replay.store.comparisons import comparison_of

    compared = comparison_of(r.manifest, hand)  # a played hand's (LOG_FORMAT §15)
    you = 0 if compared is None else int(log.hand[f"delta_{compared.seat}"])
    if fmt == "json":
        out = result.to_dict()
        if compared is not None:
            out["comparison"] = compared.to_dict(you)
        click.echo(_json(out))
        return
    click.echo(printable(render(result), "\n"))
    if compared is not None:
        click.echo(f"\nseat {compared.seat}, {printable(compared.line(you))}")


def _json(doc: Any) -> str:
    """``doc`` as the JSON review prints: C1 controls and bidi overrides of stored names
    escaped too (``json`` writes only C0 ones as escapes with ``ensure_ascii=False``)."""
    return printable(json.dumps(doc, ensure_ascii=False, indent=1), "\n", json=True)


def _warn(text: str) -> None:
    click.echo(f"Warning: {printable(text)}", err=True)


def _note(result: Any) -> None:
    if result.note:
        click.echo(f"Note: {printable(result.note)}", err=True)


def _many(
    st: Any, run: str, hand_ids: str | None, sample: int | None, seat: str, key: Any,
    engine: str, workers: int | None, fmt: str, quiet: bool, no_store: bool,
    backend_name: str = "local", address: str | None = None,
) -> None:  # fmt: skip
    """``--hands`` / ``--sample``: the rates per policy and decision kind."""
    from paohuzi.cli.progress import Progress
    from replay.analysis.review_rates import rates, rows_of
    from replay.pool import cpu_count
    from replay.review.many import parse_ids, review_hands, sample_ids
    from replay.store import reviews as S
    from replay.store.manage import format_ranges, hand_ranges

    r = st.run(run)
    seats = _seats(seat, r.rules.players)
    ranges = hand_ranges(r.manifest)
    if hand_ids is not None:
        ids = parse_ids(hand_ids)
        have: set[int] = set()
        for a, b in ranges:
            have.update(x for x in ids if a <= x <= b)
        missing = [x for x in ids if x not in have]
        if missing:
            raise input_error(f"run {run} has no hand {missing[0]} ({format_ranges(ranges)})")
    else:
        assert sample is not None
        ids = sample_ids(ranges, sample, key.seed)
    rollouts, rollout_policy, seed = key.rollouts, key.rollout_policy, key.seed
    n_workers = workers or cpu_count()
    sr = None if no_store else S.StoredReviews(r.path, r.manifest, key, _warn)
    need = {h: list(seats) if sr is None else S.missing(sr, h, seats) for h in ids}
    ray = None
    if backend_name == "ray":
        from replay.record.ray_backend import RayBackend

        ray = RayBackend(address)
        ray.open()
        if not quiet:
            click.echo(ray.describe(), err=True)
    try:
        with Progress(f"review run {run}", not quiet, "review", "hands") as bar:
            fresh = review_hands(st.root, run, ids, seats, rollouts, rollout_policy, seed,
                                 engine, n_workers, bar, need, ray)  # fmt: skip
    finally:
        if ray is not None:
            ray.close()
    got = fresh if sr is None else [(h, S.merge(rv, seats, sr, h), p) for h, rv, p in fresh]
    if sr is not None:
        _note(S.store(r.path, key, [(h, S.mask_of(need[h]), rv.decisions)
                                    for h, rv, _ in fresh if need[h]]))  # fmt: skip
    rows = [row for h, rv, pols in got for row in rows_of(h, rv, pols)]
    table = rates(rows)
    if fmt == "json":
        doc = {
            "run": run, "hands": ids, "seats": seats, "rollouts": rollouts,
            "rollout_policy": rollout_policy, "seed": seed,
            "rates": [t.to_dict() for t in table],
            "hand_summaries": {str(h): rv.summary()["all"] for h, rv, _ in got},
        }  # fmt: skip
        click.echo(_json(doc))
        return
    click.echo(printable(render_rates(run, len(ids), rollouts, rollout_policy, seed, table), "\n"))


def render_rates(
    run: str, n_hands: int, rollouts: int, policy: str, seed: int, table: list[Any]
) -> str:
    """The rates as text: one row per policy and decision kind (a policy's control
    characters escaped by the table)."""
    from paohuzi.cli.text_table import headed

    def share(s: Any) -> str:
        return f"{100 * s.p:.1f} % [{100 * s.lo:.1f}, {100 * s.hi:.1f}]"

    def mean(m: Any) -> str:
        if m.lo != m.lo:  # one hand: no interval
            return f"{m.mean:.2f}"
        return f"{m.mean:.2f} [{m.lo:.2f}, {m.hi:.2f}]"

    head = (
        f"review of run {run}: {n_hands} hands, {rollouts} rollouts per decision by {policy},"
        f" seed {seed}; 95 % intervals (a hand one cluster)"
    )
    rows = [
        [t.policy, t.kind, f"{t.decisions:,}", share(t.blunder), share(t.mistake),
         share(t.inaccuracy), share(t.best), mean(t.score_loss), mean(t.win_loss)]
        for t in table
    ]  # fmt: skip
    header = ["policy", "kind", "decisions", "blunders", "mistakes", "inaccuracies",
              "best played", "score loss", "win loss (pts)"]  # fmt: skip
    return head + "\n\n" + headed(header, rows)


def _pct(e: Any) -> str:
    return f"{100 * e.mean:5.1f} ±{100 * (e.high - e.mean):4.1f}"


def _score(e: Any) -> str:
    return f"{e.mean:+6.2f} ±{e.high - e.mean:4.2f}"


def render(result: Any) -> str:
    """The review as text: one block per decision, then the summary."""
    lines = [
        f"review of {result.where}: seats {', '.join(map(str, result.seats))},"
        f" {result.rollouts} rollouts per decision by {result.rollout_policy}, seed"
        f" {result.seed} ({result.engine} engine); win % and score ± a 95 % interval"
    ]
    for d in result.decisions:
        lines.append("")
        lines.extend(render_decision(d))
    lines.append("")
    lines.extend(render_summary(result))
    return "\n".join(lines)


def render_decision(d: Any) -> list[str]:
    """One decision's block: its verdict (engine.judge.verdict: the option played, each
    measure's best and the loss against it, with intervals) and class, and every option's
    win % and score with their intervals."""
    from engine.actions import action_str
    from engine.judge import option_tags, verdict
    from paohuzi.cli.text_table import headed

    mark = f"  {d.kind.upper()}" if d.kind else ""
    head = f"step {d.step} · seat {d.seat} · {d.phase}: {verdict(d, intervals=True)}{mark}"
    rows = []
    for v in sorted(d.options, key=lambda v: (-v.delta.mean, v.action)):
        tag = ", ".join(option_tags(d, v.action))
        rows.append([action_str(v.action), _pct(v.win), _score(v.delta), tag])
    return [head, headed(["  option", "win %", "score", ""], [["  " + r[0], *r[1:]] for r in rows])]


def render_summary(result: Any) -> list[str]:
    """Per seat (and all), engine.judge.summary_text: decisions, agreement with the best
    option by score, and by win chance the accuracy, the classes and the costliest steps."""
    from engine.judge import summary_text

    ds = result.decisions
    return [
        f"{key}: {summary_text(part)}"
        for key, part in [
            ("all", ds),
            *((f"seat {s}", [d for d in ds if d.seat == s]) for s in result.seats),
        ]
    ]
