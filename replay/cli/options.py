"""Options shared by several commands (``--data`` is :func:`replay.store.layout.data_option`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click


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
