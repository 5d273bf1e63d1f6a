"""The default dataset behind ``make demo``: runs large enough that every dashboard page's
intervals are narrow, recorded with ``paohuzi simulate`` into the store (``data/`` by default).

* the hunan preset under ``learned@hunan`` in every seat — the strongest fast policy, the
  one docs/REFERENCE.md's figures are measured with, so the Reference page compares like with
  like;
* heuristic / greedy / random played ``--duplicate`` (every deal once per rotation, for the
  paired policy differences);
* rule changes beside the baseline: 10 instead of 15 胡息, the full 花样 (every 名堂), and the
  4-player table, each under its strongest fast policy too.

About 375,000 hands (the hunan run 180,000): under a minute of play on two cores once the
engine is compiled (the CHANGELOG has the time measured). A run
already complete is only confirmed (``paohuzi simulate`` resumes or confirms, it never
duplicates), so a second ``make demo`` starts the dashboard at once. (The smaller runs of
earlier versions, ``demo-greedy`` and the others, stay in a store that has them; ``paohuzi
rm`` removes them.)

The hunan run has the most hands, so it is the dashboard's first view (one rule set:
``dashboard.services.filters.default_runs``). Then a small sample of it and of the
``--duplicate`` run is reviewed (``paohuzi review RUN --sample K``, :data:`DEMO_REVIEWS`:
some seconds), so the Review page and the Replay page's review have stored reviews to show;
a review already stored is not made again.

    python -m paohuzi.demo_data [--data DIR] [--workers N] [--dry-run]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from replay.pool import cpu_count
from replay.store.layout import MANIFEST_NAME, data_option, run_dir

#: Each run: its name and the ``paohuzi simulate`` arguments after ``--data DIR``.
DEMO_RUNS: list[tuple[str, list[str]]] = [
    ("demo-hunan", ["--hands", "180000", "--seed", "1", "--policies", "learned@hunan"]),
    (
        "demo-dup",
        [
            "--hands", "15000", "--seed", "2", "--policies", "heuristic,greedy,random",
            "--duplicate",
        ],
    ),
    ("demo-hunan-min10", ["--hands", "50000", "--seed", "3", "--policies", "learned@hunan",
                          "--set", "min_huxi=10"]),
    ("demo-hunan-full", ["--hands", "50000", "--seed", "4", "--policies", "heuristic",
                         "--rules", "hunan-full"]),
    ("demo-hunan-4p", ["--hands", "50000", "--seed", "5", "--policies", "learned@hunan-4p",
                       "--rules", "hunan-4p"]),
]  # fmt: skip


#: The reviews stored after the runs: the run, the hands sampled and the rollouts per option
#: (rollout policy and seed: ``paohuzi review``'s defaults).
DEMO_REVIEWS: list[tuple[str, int, int]] = [("demo-hunan", 24, 32), ("demo-dup", 16, 32)]


def review_commands(data: Path, workers: int) -> list[list[str]]:
    """The ``paohuzi review`` argument lists, in order (the run's name is the second)."""
    return [
        ["review", name, "--sample", str(k), "--rollouts", str(n), "--data", str(data),
         "--workers", str(workers), "--quiet"]
        for name, k, n in DEMO_REVIEWS
    ]  # fmt: skip


def has_review(data: Path, name: str) -> bool:
    """Whether the run's manifest lists a stored review with the demo's rollouts (and the
    review's default rollout policy and seed)."""
    from replay.review.defaults import DEFAULT_ROLLOUT_POLICY

    rollouts = {n: k for n, _, k in DEMO_REVIEWS}.get(name)
    try:
        m = json.loads((run_dir(data, name) / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return any(
        e.get("rollouts") == rollouts
        and e.get("rollout_policy") == DEFAULT_ROLLOUT_POLICY
        and e.get("seed") == 0
        for e in m.get("reviews") or []
        if isinstance(e, dict)
    )


def commands(data: Path, workers: int) -> list[list[str]]:
    """The ``paohuzi simulate`` argument lists, in order."""
    return [
        ["simulate", "--data", str(data), "--run", name, "--workers", str(workers), *args]
        for name, args in DEMO_RUNS
    ]


def is_complete(data: Path, name: str) -> bool:
    try:
        m = json.loads((run_dir(data, name) / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return m.get("status") == "complete"


@click.command()
@data_option
@click.option(
    "--workers",
    "-w",
    type=click.IntRange(min=1),
    default=lambda: min(2, cpu_count()),
    show_default="2, or the CPU count if fewer",
    help="Worker processes per run.",
)
@click.option("--dry-run", is_flag=True, help="Print the commands and do nothing.")
def main(data: Path, workers: int, dry_run: bool) -> None:
    """Record the demo runs that are not complete yet into the store, then the reviews not
    stored yet."""
    from paohuzi.cli.main import main as paohuzi

    if dry_run:
        for c in commands(data, workers) + review_commands(data, workers):
            click.echo("paohuzi " + " ".join(c))
        return
    todo = [c for c in commands(data, workers) if not is_complete(data, c[4])]
    start = time.perf_counter()
    for c in todo:
        _run(paohuzi, c)
    if todo:
        click.echo(
            f"demo data: {len(todo)} run(s) recorded in {time.perf_counter() - start:.0f} s"
            f" into {data}"
        )
    else:
        click.echo(f"demo data: all {len(DEMO_RUNS)} runs are complete in {data}")
    reviews = [c for c in review_commands(data, workers) if not has_review(data, c[1])]
    start = time.perf_counter()
    for c in reviews:
        _run(paohuzi, c)
    if reviews:
        click.echo(
            f"demo data: {len(reviews)} review(s) stored in {time.perf_counter() - start:.0f} s"
        )


def _run(paohuzi: click.Command, args: list[str]) -> None:
    click.echo(f"demo data: paohuzi {' '.join(args)}", err=True)
    try:
        paohuzi.main(args, prog_name="paohuzi", standalone_mode=False)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)


if __name__ == "__main__":
    main()
