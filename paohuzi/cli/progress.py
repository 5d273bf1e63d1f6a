"""The one progress display of every long command (``simulate``, ``sweep``, ``review``,
``verify``, ``tune``), on stderr: a rich bar on a terminal, plain periodic lines otherwise.

:func:`rich_bar` makes the bar (the command's name in bold, a 24-wide bar, the caller's
columns); :class:`Progress` is the ``progress(done, total)`` callback the stage packages call.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click

#: Seconds between two progress lines when stderr is not a terminal.
PLAIN_INTERVAL = 10.0


def fmt_duration(s: float) -> str:
    """``m:ss``, or ``h:mm:ss`` from an hour.

    >>> fmt_duration(59.6), fmt_duration(3725)
    ('1:00', '1:02:05')
    """
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def rich_bar(command: str, *columns: Any, thread: bool = True) -> Any:
    """A rich progress bar on stderr: ``command`` in bold, the bar, then ``columns``.
    ``thread=False``: no refresh thread (the caller refreshes; a process that forks its
    workers must have no threads)."""
    from rich.console import Console
    from rich.progress import BarColumn, TextColumn
    from rich.progress import Progress as RichProgress

    return RichProgress(
        TextColumn(f"[bold]{command}"),
        BarColumn(bar_width=24),
        *columns,
        console=Console(stderr=True),
        transient=False,
        auto_refresh=thread,
    )


class Progress:
    """``progress(done, total)`` of ``unit``: a rich bar on a terminal (done/total, percent,
    rate, ETA), else a plain line every :data:`PLAIN_INTERVAL` seconds and at the end
    (``plain=False``: nothing). ``thread=False``: the bar is redrawn at each call, with no
    refresh thread."""

    def __init__(
        self,
        label: str,
        enabled: bool = True,
        command: str = "simulate",
        unit: str = "hands",
        *,
        plain: bool = True,
        thread: bool = True,
    ) -> None:
        self.label = label
        self.enabled = enabled
        self.command = command
        self.unit = unit
        self.plain = plain
        self.thread = thread
        self.tty = sys.stderr.isatty()
        self.start = time.monotonic()
        self.first: int | None = None
        self.last_line = 0.0
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> Progress:
        if self.enabled and self.tty:
            from rich.progress import TaskProgressColumn, TextColumn, TimeRemainingColumn

            self.bar = rich_bar(
                self.command,
                TextColumn("{task.completed:,}/{task.total:,} " + self.unit),
                TaskProgressColumn(),
                TextColumn("{task.fields[rate]} " + self.unit + "/s"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                thread=self.thread,
            )
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self.first is None:
            self.first, self.start = done, now
        elapsed = now - self.start
        rate = (done - self.first) / elapsed if elapsed > 0 else 0.0
        if self.bar is not None:
            if self.task is None:
                self.task = self.bar.add_task(self.label, total=total, completed=done, rate="-")
            self.bar.update(self.task, completed=done, rate=f"{rate:,.{0 if rate >= 10 else 1}f}")
            if not self.thread:
                self.bar.refresh()
            return
        if not self.plain:
            return
        if now - self.last_line >= PLAIN_INTERVAL or done >= total:
            self.last_line = now
            pct = 100.0 * done / total if total else 100.0
            if rate > 0:
                eta = fmt_duration((total - done) / rate)
                speed = f"{rate:,.{0 if rate >= 10 else 1}f} {self.unit}/s, ETA {eta}"
            else:
                speed = "starting"
            click.echo(
                f"{self.label}: {done:,}/{total:,} {self.unit} ({pct:.0f}%), {speed}", err=True
            )
