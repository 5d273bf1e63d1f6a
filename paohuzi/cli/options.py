"""Options shared by several commands (``--data`` is :func:`replay.store.layout.data_option`)."""

from __future__ import annotations

import os
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


def pool_workers_option(result: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--workers/-w N``: processes over shards, default the CPU count; ``result`` says what
    does not depend on it (shown in the help)."""
    return click.option(
        "--workers",
        "-w",
        type=click.IntRange(min=1),
        default=os.cpu_count() or 1,
        show_default="CPU count",
        help=f"Worker processes over shards ({result} does not depend on it).",
    )
