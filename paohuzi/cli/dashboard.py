"""``paohuzi dashboard``: start the Streamlit dashboard over a store (headless)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.options import refresh_option
from replay.store.layout import DATA_ENV, data_option


def app_path() -> Path:
    """The dashboard's entry script (``dashboard/app.py`` of the installed package)."""
    spec = importlib.util.find_spec("dashboard")
    if spec is None or not spec.submodule_search_locations:
        raise click.ClickException("the dashboard package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "app.py"


def streamlit_command(
    data: Path,
    port: int,
    address: str,
    refresh: float | None = None,
    play: bool = False,
    reference: Path | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The ``streamlit run`` command line (through :mod:`dashboard.server`) and its
    environment (the store in ``$PAOHUZI_DATA``, the refresh interval in ``$PAOHUZI_REFRESH``
    when given, ``$PAOHUZI_PLAY=1`` when the Play page may write, the Reference page's file
    in ``$PAOHUZI_REFERENCE`` when given)."""
    from replay.play.table import PLAY_ENV
    from replay.reference.published import REFERENCE_ENV
    from replay.store.snapshot import REFRESH_ENV

    env = dict(os.environ)
    env[DATA_ENV] = str(Path(data).resolve())
    if refresh is not None:
        env[REFRESH_ENV] = repr(float(refresh))
    env.pop(PLAY_ENV, None)  # read-only unless asked, whatever the caller's environment says
    if play:
        env[PLAY_ENV] = "1"
    if reference is not None:
        env[REFERENCE_ENV] = str(Path(reference).resolve())
    cmd = [
        sys.executable,
        "-m",
        "dashboard.server",  # streamlit run, the store warmed meanwhile
        "run",
        str(app_path()),
        "--server.headless=true",
        f"--server.port={port}",
        f"--server.address={address}",
        "--server.fileWatcherType=none",
        "--server.runOnSave=false",
        "--browser.gatherUsageStats=false",
        "--global.developmentMode=false",
        "--theme.base=light",
        "--client.toolbarMode=viewer",
    ]
    return cmd, env


def _reference_path(_ctx: Any, _param: Any, value: str | None) -> Path | None:
    if value is not None and not value.strip():
        raise click.BadParameter("empty file name (leave --reference out for the default)")
    return None if value is None else Path(value)


@click.command(
    short_help="Start the dashboard (Streamlit) over the store (read-only unless --play)."
)
@data_option
@click.option(
    "--port",
    "-p",
    type=click.IntRange(1, 65535),
    default=8501,
    show_default=True,
    help="Port to serve on.",
)
@click.option(
    "--address",
    default="localhost",
    show_default=True,
    help="Address to listen on (0.0.0.0 for every interface).",
)
@refresh_option
@click.option(
    "--play",
    is_flag=True,
    help="Let the Play page write: hands played in the browser go into the store.",
)
@click.option(
    "--reference",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    callback=_reference_path,
    help="The Reference page's figures (default: $PAOHUZI_REFERENCE, else the repository's"
    " docs/reference/reference.json, written by `paohuzi report`).",
)
def dashboard(
    data: Path,
    port: int,
    address: str,
    refresh: float | None,
    play: bool,
    reference: Path | None,
) -> None:
    """Serve the analytics dashboard on http://ADDRESS:PORT (headless; open it in a browser).

    Pages: overview, win rates, 胡息 and score, 荒庄, 名堂, compare, reference (the selection
    beside the published per-preset figures), actions, replay, drill-down, review, SQL, play.
    The store is only read — unless --play lets the Play page record the hands played there;
    a missing or empty store, or a missing reference file, is reported on the page.

    \b
    paohuzi dashboard
    paohuzi dashboard --data /big/store --port 8600
    paohuzi dashboard --reference /tmp/ref/reference/reference.json
    paohuzi dashboard --play
    """
    from paohuzi.cli.errors import input_error
    from replay.store.snapshot import refresh_from_env

    if refresh is None:
        try:
            refresh_from_env()
        except ValueError as e:
            raise input_error(str(e)) from None
    cmd, env = streamlit_command(data, port, address, refresh, play, reference)
    where = Path(data).resolve()
    if not where.is_dir():
        click.echo(f"note: no store at {where} yet (the page will say so)", err=True)
    if reference is not None and not Path(reference).is_file():
        click.echo(
            f"note: no reference file at {Path(reference).resolve()} (the Reference page will"
            " say so)",
            err=True,
        )
    mode = "the Play page records hands" if play else "read-only"
    click.echo(
        f"paohuzi dashboard: http://{address}:{port}  (store {where}, {mode}; Ctrl-C stops it)"
    )
    sys.stdout.flush()
    os.execve(sys.executable, cmd, env)
