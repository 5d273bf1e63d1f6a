"""The ``paohuzi`` command line: a click group whose subcommands live in their own modules.

To add a subcommand, define a click command in its own module and register it in
:data:`LAZY_COMMANDS` as ``"name": "module:attribute"``; it is imported only when used, so
``paohuzi score`` never pays for the simulator or the dashboard. Every usage or input error is
reported as one line on stderr with exit status 2.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from paohuzi.cli.errors import InputError, bound_echoes, input_error

__all__ = ["LAZY_COMMANDS", "SHORT_HELP", "InputError", "input_error", "main"]

#: Subcommands defined elsewhere, loaded on first use: ``"name": "package.module:command"``.
LAZY_COMMANDS: dict[str, str] = {
    "score": "paohuzi.cli.score:score",
    "dashboard": "paohuzi.cli.dashboard:dashboard",
    "demo": "paohuzi.cli.demo:demo",
    "simulate": "paohuzi.cli.simulate:simulate",
    "stats": "paohuzi.cli.stats:stats",
    "index": "paohuzi.cli.index:index",
    "replay": "paohuzi.cli.replay:replay",
    "play": "paohuzi.cli.play:play",
    "verify": "paohuzi.cli.verify:verify",
    "export": "paohuzi.cli.export:export_command",
    "import": "paohuzi.cli.importing:import_command",
    "sweep": "paohuzi.cli.sweep:sweep",
    "runs": "paohuzi.cli.runs:runs",
    "hands": "paohuzi.cli.runs:hands",
    "rm": "paohuzi.cli.runs:rm",
    "doctor": "paohuzi.cli.doctor:doctor",
    "review": "paohuzi.cli.review:review",
    "tune": "paohuzi.cli.tune:tune",
    "distill": "paohuzi.cli.distill:distill",
    "serve": "paohuzi.cli.serve:serve",
    "report": "paohuzi.cli.report:report",
}

#: The one-line help of each lazy command, for ``paohuzi --help`` without importing them
#: (equal to the command's own ``short_help``: tests/paohuzi/cli/test_cli_imports.py checks).
SHORT_HELP: dict[str, str] = {
    "score": "Score a hand: 门子, 胡息, win or not; 等, 名堂, 番 and settlement.",
    "dashboard": "Start the dashboard (Streamlit) over the store (read-only unless --play).",
    "demo": "Play one seeded hand and print it move by move.",
    "simulate": "Play hands with policies and record them (Parquet + DuckDB).",
    "stats": "Win, 荒庄, seat, dealer, policy, 胡息 and 名堂 statistics of runs.",
    "index": "Build the summary tables and facts of runs.",
    "replay": "Show a recorded hand at any step (or step through it).",
    "play": "Play a hand against the bots, recorded as it is played.",
    "verify": "Check recorded hands against the rules; report every bad hand.",
    "export": "Write one recorded hand as a replay file.",
    "import": "Verify replay files and add their hands to the store.",
    "sweep": "Run a grid of presets, --set values and policy mixes.",
    "runs": "List the runs of the store.",
    "hands": "List and filter the hands of a run.",
    "rm": "Remove a run from the store.",
    "doctor": "List (--fix: remove) left-overs of killed commands.",
    "review": "Value every decision of a recorded hand (determinized rollouts).",
    "tune": "Tune a policy's weights by CMA-ES over duplicate self-play.",
    "distill": "Teach a learned policy by search (expert iteration).",
    "serve": "Serve the store's runs, hands and statistics over HTTP.",
    "report": "Write the reference statistics (docs/REFERENCE.md) from their runs.",
}

_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _one_line(e: click.UsageError) -> InputError:
    where = e.ctx.command_path if e.ctx is not None else "paohuzi"
    return InputError(bound_echoes(f"{_suggesting(e)} (see '{where} --help')"))


def _suggesting(e: click.UsageError) -> str:
    """The message of a usage error, a misspelt option or choice ending with the closest
    valid ones by :func:`engine.errors.did_you_mean`, as every other "unknown …" line of the
    command line does (click's own "Did you mean" and "Possible options" left out)."""
    from engine.errors import did_you_mean

    if isinstance(e, click.NoSuchOption) and e.ctx is not None:
        names = [
            o
            for p in e.ctx.command.get_params(e.ctx)
            if isinstance(p, click.Option) and not p.hidden
            for o in (*p.opts, *p.secondary_opts)
            if o != getattr(p, "former", None)
        ]
        return f"No such option: {e.option_name}{did_you_mean(e.option_name, names)}"
    text = e.format_message()
    param = getattr(e, "param", None)
    if isinstance(e, click.BadParameter) and isinstance(getattr(param, "type", None), click.Choice):
        value = _leading_repr(e.message)
        if value is not None:
            hint = did_you_mean(value, [str(c) for c in param.type.choices])  # type: ignore[union-attr]
            if hint:
                text = f"{text.rstrip('.')}{hint}"
    return text


def _leading_repr(message: str) -> str | None:
    """The value click's :class:`click.Choice` quotes at the start of its message
    (``'fas' is not one of …``), or None."""
    import ast
    import re

    m = re.match(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*") is not """, message)
    if m is None:
        return None
    try:
        value = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def _bounded(e: click.ClickException) -> click.ClickException:
    """``e``, or when its message echoes a long input one with it cut (:func:`bound_echoes`)
    and the same exit status."""
    text = e.format_message()
    short = bound_echoes(text)
    if short == text:
        return e
    for cls in (InputError, click.ClickException):
        if e.exit_code == cls.exit_code:
            return cls(short)
    return e  # no other exit status is used


class PaohuziGroup(click.Group):
    """A group with lazily imported subcommands and one-line usage errors."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """A misspelt command: one line naming the closest commands (the lazy ones too)."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as e:
            name = args[0] if args else ""
            if not name or name.startswith("-") or name in self.list_commands(ctx):
                raise
            from engine.errors import did_you_mean, quote

            hint = did_you_mean(name, self.list_commands(ctx))
            raise click.UsageError(f"No such command {quote(name)}{hint or '.'}", ctx) from e

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None and cmd_name in LAZY_COMMANDS:
            module, _, attr = LAZY_COMMANDS[cmd_name].partition(":")
            cmd = getattr(importlib.import_module(module), attr)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help`` from :data:`SHORT_HELP`, importing no command."""
        rows = []
        for name in self.list_commands(ctx):
            if name in SHORT_HELP and name not in self.commands:
                rows.append((name, SHORT_HELP[name]))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(formatter.width - 6 - len(name))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except _NO_ARGS_IS_HELP:
            raise
        except click.UsageError as e:
            raise _one_line(e) from None
        except click.ClickException as e:
            raise _bounded(e) from None

    def invoke(self, ctx: click.Context) -> Any:
        from replay.store.ducklimits import DuckLimitsError, duckdb_settings

        try:
            duckdb_settings()  # a bad PAOHUZI_DUCKDB_* stops any command before it starts
        except DuckLimitsError as e:
            raise InputError(str(e)) from None
        try:
            return super().invoke(ctx)
        except _NO_ARGS_IS_HELP:
            raise
        except click.UsageError as e:
            raise _one_line(e) from None
        except click.ClickException as e:
            raise _bounded(e) from None


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """``-V``/``--version``, as ``click.version_option`` prints it; the version is looked up
    only when asked (``importlib.metadata`` would cost every command's start 20 ms)."""
    if not value or ctx.resilient_parsing:
        return
    from replay.version import package_version

    click.echo(f"paohuzi, version {package_version()}", color=ctx.color)
    ctx.exit()


@click.group(cls=PaohuziGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-V",
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    help="Show the version and exit.",
    callback=_show_version,
)
def main() -> None:
    """跑胡子 (Hunan Paohuzi): hand calculator, simulator, recorder and replayer."""
