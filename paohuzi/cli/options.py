"""Options shared by several commands (``--data`` is :func:`replay.store.layout.data_option`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import click

from engine.errors import quote


class BoundedInt(click.IntRange):
    """An integer from ``min`` to ``max``, both given: anything else (``--limit 1e20``, a
    number past what the store's queries take) is one error line naming the option and both
    bounds.

    >>> BoundedInt(1, 10).convert("7", None, None)
    7
    >>> BoundedInt(1, 10).convert("1e20", None, None)
    Traceback (most recent call last):
    ...
    click.exceptions.BadParameter: expected an integer from 1 to 10, got '1e20'
    """

    def __init__(self, min: int, max: int) -> None:  # noqa: A002 - click's names
        super().__init__(min, max)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            self.fail(f"expected an integer from {self.min:,} to {self.max:,}, got {quote(value)}",
                      param, ctx)  # fmt: skip


def _cpu_count() -> int:
    """replay.pool.cpu_count, imported when a default is asked for (the pool's imports would
    cost every command's start, ``--help`` included)."""
    from replay.pool import cpu_count

    return cpu_count()


def pool_workers_option(result: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--workers/-w N``: processes over shards, default the CPU count; ``result`` says what
    does not depend on it (shown in the help)."""
    return click.option(
        "--workers",
        "-w",
        type=click.IntRange(min=1),
        default=_cpu_count,
        show_default="CPU count",
        help=f"Worker processes over shards ({result} does not depend on it).",
    )


#: The default of ``--max-bytes`` (replay.replayer.replay_file.MAX_BYTES, not imported here
#: so that ``--help`` stays cheap).
MAX_BYTES = 1 << 20


def max_bytes_option(f: Any) -> Any:
    """``--max-bytes N``: the largest replay file read (``import`` and ``replay``)."""
    return click.option(
        "--max-bytes",
        type=click.IntRange(min=1),
        default=MAX_BYTES,
        show_default=True,
        metavar="N",
        help="Refuse a replay file larger than N bytes (a hand is a few KB).",
    )(f)


class RenamedOption(click.Option):
    """An option that was renamed: its former spelling ``former`` (one of its names) is still
    read, but ``--help`` and the error messages show only the current ones.

    >>> @click.command()
    ... @renamed_option("--import-bytes", former="--ingest-bytes", default=1)
    ... def cmd(import_bytes: int) -> None:
    ...     click.echo(import_bytes)
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(cmd, ["--ingest-bytes", "7"]).output.strip()
    '7'
    >>> "--ingest-bytes" in CliRunner().invoke(cmd, ["--help"]).output
    False
    """

    def __init__(self, *args: Any, former: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if former not in self.opts:
            raise ValueError(f"{former!r} is not one of the option's names {self.opts}")
        self.former = former

    def _current(self) -> click.Option:
        """This option as shown: without its former spelling."""
        shown = copy.copy(self)
        shown.opts = [o for o in self.opts if o != self.former]
        return shown

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        return click.Option.get_help_record(self._current(), ctx)

    def get_error_hint(self, ctx: click.Context | None) -> str:
        return click.Option.get_error_hint(self._current(), ctx)


def renamed_option(name: str, *, former: str, **kwargs: Any) -> Callable[[Any], Any]:
    """``click.option(name, ...)`` that also reads ``former``, the option's old spelling,
    without showing it (:class:`RenamedOption`); its value is the parameter named after
    ``name``."""
    dest = name.lstrip("-").replace("-", "_")
    return click.option(name, former, dest, cls=RenamedOption, former=former, **kwargs)


def refresh_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--refresh S``: seconds between two full rechecks of every file of the store by a
    long-lived reader (:mod:`replay.store.snapshot`); default ``$PAOHUZI_REFRESH`` or 2."""
    from replay.store.snapshot import DEFAULT_REFRESH, REFRESH_ENV

    return click.option(
        "--refresh",
        type=click.FloatRange(0, 86400),
        default=None,
        metavar="S",
        help=f"Seconds between two full rechecks of every file of the store (a shard edited"
        f" in place is seen within them; manifests and run folders are looked at on every"
        f" request; 0: never). Default ${REFRESH_ENV} or {DEFAULT_REFRESH:g}.",
    )(f)
