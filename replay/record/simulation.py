"""A simulation as a library call: what ``paohuzi simulate`` does, without the command line.

:func:`build_spec` turns the command's options (rules and ``--set`` overrides, policies,
hands, seed …) into the typed :class:`~replay.record.spec.RunSpec`, its weight tables read and
its engine resolved; :func:`simulate` plays (or resumes, or confirms) that run into a store on
either backend. The command line (``paohuzi simulate``, ``sweep``, ``report``) parses, calls
these and prints; a program calls them the same way::

    from pathlib import Path
    from replay.record.simulation import build_spec, simulate

    spec = build_spec(hands=1_000, seed=7, policies="learned@hunan,heuristic,random")
    result = simulate(spec, Path("data"))  # the run spec.default_name(), resumed if there
    print(result.name, result.hands)  # hunan-s7-n1000-… 1000
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replay import store
from replay.record import runner
from replay.record.backend import Backend, cap_workers
from replay.record.spec import (
    DEFAULT_POLICIES,
    DEFAULT_SESSION_LENGTH,
    DEFAULT_SHARD_HANDS,
    RunSpec,
)

__all__ = ["build_spec", "simulate"]


def build_spec(
    hands: int,
    seed: int = 0,
    rules: str = "hunan",
    overrides: tuple[str, ...] | list[str] = (),
    policies: str = DEFAULT_POLICIES,
    session_length: int = DEFAULT_SESSION_LENGTH,
    duplicate: bool = False,
    shard_hands: int = DEFAULT_SHARD_HANDS,
    engine: str = "auto",
    data: Path | None = None,
    run_name: str | None = None,
    preset_rollout: bool = True,
) -> RunSpec:
    """The run of these options (those of ``paohuzi simulate``), with ``engine`` resolved to
    ``fast`` or ``reference`` (raises ``PaohuziError`` on bad input). ``policies``: one per
    seat, comma-separated, or one for every seat. A ``POLICY@WEIGHTS`` table is read now; if
    the run (``run_name``, else the default name, in the store ``data``) already exists, the
    table it recorded is used when the file is gone, and a file that now says otherwise is
    refused (:func:`replay.record.spec.resolve_tables`). With ``preset_rollout`` a bare
    ``search@N`` plays its preset's rollouts
    (:func:`engine.policies.search_policy.with_preset_rollout`), except in a run of the
    store recorded with it bare, which resumes as it was played."""
    from engine.policies import load_policy, table_spec
    from engine.policies.search_policy import is_search_spec, with_preset_rollout
    from engine.policies.search_policy import parse_spec as parse_search
    from engine.policies.weights import canonical, defaults, parse_spec
    from engine.rules import find_rules
    from replay.record.spec import resolve_tables

    ruleset = find_rules(rules).with_overrides(tuple(overrides))
    names = [s.strip() for s in policies.split(",") if s.strip()]
    for n in names:  # names and syntax; a weights file is read below
        if is_search_spec(n):
            parse_search(n)
        elif table_spec(n) is not None:
            parse_spec(n)
        else:
            load_policy(n)
    if len(names) == 1:
        names = names * ruleset.players
    if len(names) != ruleset.players:
        from engine.errors import InvalidNotation

        raise InvalidNotation(
            f"{len(names)} policies given for {ruleset.players} seats: {policies!r}"
        )

    def planned(seats: list[str]) -> RunSpec:
        """The run of ``seats``, with stand-in tables: the run's name does not depend on the
        tables (they are outside its identity), so it is found before any file is read."""
        played = [t for t in map(table_spec, seats) if t is not None]
        stand_in = {canonical(t): defaults(parse_spec(t)[0]) for t in played}
        return RunSpec(
            rules=ruleset,
            policies=tuple(seats),
            seed=seed,
            deals=hands,
            session_length=session_length,
            duplicate=duplicate,
            shard_hands=shard_hands,
            weights=tuple(sorted(stand_in.items())),
        )

    spec = planned(names)
    if preset_rollout:
        # a bare search@N gets its preset's rollouts, unless the run these very words
        # address was recorded with it bare (before there were preset rollouts): that run
        # resumes as it was played
        with_rollout = [with_preset_rollout(n, ruleset) for n in names]
        bare_run = run_name or spec.default_name()
        if with_rollout != names and _recorded_policies(data, bare_run) != names:
            names, spec = with_rollout, planned(with_rollout)
    if spec.weights:
        name = run_name or spec.default_name()
        recorded = _recorded(data, name) if data is not None else {}
        tables = resolve_tables(names, recorded, name if recorded else None)
        spec = dataclasses.replace(spec, weights=tables)
    if engine == "reference":
        return spec
    from replay.record.fast_engine import resolve

    return dataclasses.replace(spec, engine=resolve(engine, spec))


def _recorded_manifest(data: Path | None, name: str) -> dict[str, Any] | None:
    """The manifest of run ``name`` of the store ``data`` (None when there is no such run, or
    its manifest cannot be read: the runner then says why)."""
    from engine.errors import PaohuziError

    if data is None:
        return None
    try:
        path = store.run_dir(data, name)
        if not (path / store.MANIFEST_NAME).exists():
            return None
        return store.read_manifest(path)
    except (OSError, PaohuziError):
        return None


def _recorded_policies(data: Path | None, name: str) -> list[str] | None:
    """The seats' policies run ``name`` of the store ``data`` recorded (None as
    :func:`_recorded_manifest`)."""
    manifest = _recorded_manifest(data, name)
    policies = (manifest or {}).get("params", {}).get("policies")
    return [str(p) for p in policies] if isinstance(policies, list) else None


def _recorded(data: Path, name: str) -> dict[str, Any]:
    """The weight tables run ``name`` of the store ``data`` recorded ({} as
    :func:`_recorded_manifest` gives None, or when they cannot be read)."""
    from engine.errors import PaohuziError
    from replay.record.spec import recorded_tables

    manifest = _recorded_manifest(data, name)
    try:
        return recorded_tables(manifest) if manifest is not None else {}
    except PaohuziError:
        return {}


def simulate(
    spec: RunSpec,
    data: Path,
    name: str | None = None,
    *,
    workers: int | None = None,
    backend: Backend | str = "local",
    address: str | None = None,
    labels: dict[str, Any] | None = None,
    refresh: bool = True,
    progress: Callable[[int, int], None] | None = None,
    command: list[str] | None = None,
    say: bool = False,
) -> runner.RunResult:
    """Play (or resume, or confirm) the run of ``spec`` named ``name`` (default
    ``spec.default_name()``) into the store ``data``; its :class:`~replay.record.runner.RunResult`.

    ``backend``: a backend the caller opened (left open, for several runs on one Ray
    connection) or the name of one, ``local`` or ``ray`` (with ``address``), opened and
    closed here. ``workers``: shards played at once, by default and at most the backend's
    CPUs (the result does not depend on it). A ``fast`` spec's kernels are compiled (or loaded
    from numba's cache) first, in this process; ``say``: a notice on stderr when that takes a
    while. ``labels``, ``refresh``, ``progress(done, total)`` and ``command`` (the command
    line the manifest keeps) are :func:`replay.record.runner.simulate`'s, as are the errors:
    ``PaohuziError`` (also a backend that cannot be made or opened), ``store.RunMismatch``,
    ``store.StoreError``, ``RunError``, and ``KeyboardInterrupt`` with the finished shards
    kept (the same call resumes)."""
    own = isinstance(backend, str)
    where = runner.make_backend(backend, address) if isinstance(backend, str) else backend
    try:
        if own:
            where.open()
        n, _ = cap_workers(workers or where.cpus(), where)
        if spec.engine == "fast":
            from replay.record.fast_engine import warm_up

            warm_up(spec, say=say)
        return runner.simulate(
            spec, data, name, n, command, progress, where, labels, refresh
        )  # fmt: skip
    finally:
        if own:
            where.close()
