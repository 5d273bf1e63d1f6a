"""The ``paohuzi`` command line: a click group whose subcommands live in their own modules.

To add a subcommand, define a click command in its own module and register it in
:data:`LAZY_COMMANDS` as ``"name": "module:attribute"``; it is imported only when used, so
``paohuzi score`` never pays for the simulator or the dashboard. Every usage or input error is
reported as one line on stderr with exit status 2.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

import click

#: Subcommands defined elsewhere, loaded on first use: ``"name": "package.module:command"``.
LAZY_COMMANDS: dict[str, str] = {
    "score": "replay.cli.score:score",
    "dashboard": "replay.cli.dashboard:dashboard",
    "demo": "replay.cli.demo:demo",
    "simulate": "replay.cli.simulate:simulate",
    "stats": "replay.cli.stats:stats",
    "replay": "replay.cli.replay:replay",
    "verify": "replay.cli.verify:verify",
    "export": "replay.cli.exchange:export_command",
    "import": "replay.cli.exchange:import_command",
    "sweep": "replay.cli.sweep:sweep",
    "runs": "replay.cli.runs:runs",
    "hands": "replay.cli.runs:hands",
    "rm": "replay.cli.runs:rm",
}

_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class InputError(click.ClickException):
    """Bad user input: printed as one ``Error: …`` line, exit status 2."""

    exit_code = 2


def _one_line(e: click.UsageError) -> InputError:
    where = e.ctx.command_path if e.ctx is not None else "paohuzi"
    return InputError(f"{e.format_message()} (see '{where} --help')")


class PaohuziGroup(click.Group):
    """A group with lazily imported subcommands and one-line usage errors."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None and cmd_name in LAZY_COMMANDS:
            module, _, attr = LAZY_COMMANDS[cmd_name].partition(":")
            cmd = getattr(importlib.import_module(module), attr)
        return cmd

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except _NO_ARGS_IS_HELP:
            raise
        except click.UsageError as e:
            raise _one_line(e) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _NO_ARGS_IS_HELP:
            raise
        except click.UsageError as e:
            raise _one_line(e) from None


def _version() -> str:
    try:
        return metadata.version("paohuzi")
    except metadata.PackageNotFoundError:
        return "unknown"


@click.group(cls=PaohuziGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "-V", "--version", prog_name="paohuzi")
def main() -> None:
    """跑胡子 (Hunan Paohuzi): hand calculator, simulator, recorder and replayer."""
