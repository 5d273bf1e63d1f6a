"""``paohuzi sweep``: a grid of rule presets, rule overrides and policy mixes, one run a cell.

Every axis takes comma-separated values, and the grid is their product:

* ``--rules hunan,hunan-full`` — presets;
* ``--set min_huxi=10,15`` — one switch and its values (repeat ``--set`` for more switches);
* ``--policies heuristic,random`` — policy mixes; within one mix the seats are joined with
  ``+`` (``heuristic+random+heuristic``), so a comma always separates cells. Repeating
  ``--policies`` adds more mixes.

Cell runs are named ``sweep-NAME.PRESET[.KEY-VALUE…].POLICIES`` (run names allow letters,
digits, ``.``, ``_`` and ``-``: ``=`` becomes ``-``, a mix ``a+b+c`` becomes ``a-b-c``) and
hold exactly what ``paohuzi simulate`` with the same options would record, with one
exception: a bare ``search@N`` plays ``heuristic`` rollouts in every cell (``simulate`` gives
it its preset's under that preset's own rules:
:func:`engine.policies.search_policy.with_preset_rollout`), so the cells differ only in what
the grid varies. Rerunning the
sweep resumes (cells already complete are confirmed, not replayed). The cells run one after
another, each spread over the whole backend (one Ray connection for the whole sweep).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import click

from paohuzi.cli.errors import input_error
from paohuzi.cli.recording import (
    backend_options,
    engine_option,
    open_backend,
    record_run,
    refresh_after,
    start_backend,
)
from replay import store
from replay.record.spec import (
    DEFAULT_POLICIES,
    DEFAULT_SESSION_LENGTH,
    DEFAULT_SHARD_HANDS,
    RunSpec,
)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Cell:
    rules: str
    overrides: tuple[str, ...]  # "key=value", in the order of the --set options
    policies: str  # comma-separated per seat, as simulate takes it

    def label(self) -> str:
        parts = [self.rules, *(o.replace("=", "-") for o in self.overrides)]
        parts.append(self.policies.replace(",", "-"))
        return ".".join(_UNSAFE.sub("_", p) for p in parts)


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def grid(rules: str, sets: tuple[str, ...], policies: tuple[str, ...]) -> list[Cell]:
    """The cells of a sweep, in order (rules, then each --set, then policies vary fastest).

    >>> [c.label() for c in grid("hunan,hunan-full", ("min_huxi=10,15",), ("heuristic",))]
    ['hunan.min_huxi-10.heuristic', 'hunan.min_huxi-15.heuristic', 'hunan-full.min_huxi-10.heuristic', 'hunan-full.min_huxi-15.heuristic']
    >>> grid("hunan", (), ("heuristic+random+heuristic,random",))[0].policies
    'heuristic,random,heuristic'
    """
    from engine.errors import PaohuziError

    presets = _split(rules)
    if not presets:
        raise PaohuziError("--rules needs at least one preset")
    axes: list[list[str]] = []
    for s in sets:
        key, eq, values = s.partition("=")
        if not eq or not key.strip() or not _split(values):
            raise PaohuziError(f"malformed --set {s!r} (want KEY=V1,V2,…)")
        axes.append([f"{key.strip()}={v}" for v in _split(values)])
    mixes = [m.replace("+", ",") for p in (policies or (DEFAULT_POLICIES,)) for m in _split(p)]
    if not mixes:
        raise PaohuziError(f"--policies {','.join(policies)!r} names no policy mix")
    cells = [
        Cell(r, tuple(o), m)
        for r in presets
        for o in itertools.product(*axes)
        for m in mixes
    ]  # fmt: skip
    return cells


def sweep_name(cells: list[Cell], hands: int, seed: int) -> str:
    """The default sweep name: a digest of the grid and its size."""
    text = json.dumps([[c.rules, c.overrides, c.policies] for c in cells] + [hands, seed])
    return f"s{seed}-n{hands}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def cell_run_name(sweep: str, cell: Cell) -> str:
    name = f"sweep-{sweep}.{cell.label()}"
    if len(name) > 120:  # run names are at most 120 characters
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{name[:111]}.{digest}"
    return name


@click.command(short_help="Run a grid of presets, --set values and policy mixes.")
@click.option("--name", "sweep", metavar="NAME", help="Sweep name (default: from the grid).")
@click.option(
    "--rules",
    "-r",
    default="hunan",
    show_default=True,
    help="Rule presets, comma-separated (one grid axis).",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=V1,V2",
    help="A rule switch and its values (one grid axis; repeatable).",
)
@click.option(
    "--policies",
    "-p",
    multiple=True,
    metavar="MIX,MIX",
    help="Policy mixes, comma-separated; seats within a mix joined with '+'"
    " (heuristic+random+heuristic); repeatable; a bare search@N plays heuristic"
    " rollouts in every cell. Default: random.",
)
@click.option(
    "--hands", "-n", type=click.IntRange(min=1), default=10_000, show_default=True,
    help="Hands per cell (with --duplicate: deals).",
)  # fmt: skip
@click.option(
    "--seed", type=click.IntRange(0, 2**64 - 1), default=0, show_default=True,
    help="Run seed of every cell.",
)  # fmt: skip
@click.option(
    "--session-length", type=click.IntRange(min=1), default=DEFAULT_SESSION_LENGTH,
    show_default=True, help="Deals per session.",
)  # fmt: skip
@click.option("--duplicate", is_flag=True, help="Duplicate deals in every cell.")
@click.option(
    "--shard-hands", type=click.IntRange(min=1), default=DEFAULT_SHARD_HANDS,
    show_default=True, help="Target hands per shard file.",
)  # fmt: skip
@engine_option
@backend_options
@store.data_option
@click.option("--list", "list_only", is_flag=True, help="Print the cells' run names and stop.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def sweep(
    sweep: str | None,
    rules: str,
    sets: tuple[str, ...],
    policies: tuple[str, ...],
    hands: int,
    seed: int,
    session_length: int,
    duplicate: bool,
    shard_hands: int,
    engine: str,
    workers: int | None,
    backend_name: str,
    address: str | None,
    data: Path,
    list_only: bool,
    quiet: bool,
) -> None:
    """Record one run per cell of a grid, as one job on either backend.

    Each cell holds what `paohuzi simulate` with the cell's options records; the runs are
    named sweep-NAME.PRESET.KEY-VALUE.POLICIES, so the dashboard's Compare page shows them
    side by side. Rerun the same command to resume.

    \b
    paohuzi sweep --name minhx --rules hunan,hunan-full --set min_huxi=10,15 \\
        --policies heuristic,random -n 20000
    paohuzi sweep --policies heuristic+random+random,random --backend ray --address auto
    """
    from engine.errors import PaohuziError
    from replay.record.simulation import build_spec

    try:
        cells = grid(rules, sets, policies)
        specs: list[tuple[str, Cell, RunSpec]] = []
        name = sweep or sweep_name(cells, hands, seed)
        for cell in cells:
            run_name = store.check_run_name(cell_run_name(name, cell))
            spec = build_spec(
                hands, seed, cell.rules, cell.overrides, cell.policies, session_length,
                duplicate, shard_hands, engine, data, run_name, preset_rollout=False,
            )  # fmt: skip
            specs.append((run_name, cell, spec))
        names = [n for n, _, _ in specs]
        if len(set(names)) != len(names):
            raise PaohuziError("two cells of the grid have the same run name")
        if not list_only:
            store.ensure_writable(data)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    if list_only:
        for n in names:
            click.echo(n)
        return

    backend = open_backend(backend_name, address)
    recorded = False
    try:
        n_workers = start_backend(backend, workers, quiet)
        for i, (run_name, cell, spec) in enumerate(specs, 1):
            if not quiet:
                click.echo(f"sweep {name}: cell {i}/{len(specs)} {cell.label()}", err=True)
            labels = {
                "sweep": {
                    "name": name,
                    "cell": i - 1,
                    "cells": len(specs),
                    "rules": cell.rules,
                    "overrides": list(cell.overrides),
                    "policies": cell.policies,
                }
            }
            recorded = True
            record_run(spec, data, run_name, n_workers, quiet, backend, labels, refresh=False)
    finally:
        backend.close()
        if recorded:  # once for the grid (a refresh reads every run's listing)
            refresh_after(data, f"sweep {name}'s runs are recorded")
    click.echo(f"sweep {name}: {len(specs)} runs complete in {data}")
