"""``paohuzi serve``: the store's runs, hands and statistics over HTTP, read-only
(:mod:`replay.service`, docs/SERVICE.md). FastAPI and uvicorn are the optional ``service``
extra; neither is imported until the command runs."""

from __future__ import annotations

import socket
from pathlib import Path

import click

from replay.cli.main import input_error
from replay.service.limits import PAGE_MAX, QUERY_SECONDS, STREAM_MAX
from replay.store.layout import data_option


@click.command(short_help="Serve the store's runs, hands and statistics over HTTP (read-only).")
@data_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (0.0.0.0: every interface; the API has no authentication).",
)
@click.option(
    "--port",
    "-p",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--page-max",
    type=click.IntRange(min=1),
    default=PAGE_MAX,
    show_default=True,
    metavar="N",
    help="Largest limit= of GET /runs/{run}/hands.",
)
@click.option(
    "--stream-max",
    type=click.IntRange(min=1),
    default=STREAM_MAX,
    show_default=True,
    metavar="N",
    help="Largest max= (and the default) of GET /runs/{run}/hands.ndjson.",
)
@click.option(
    "--query-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=QUERY_SECONDS,
    show_default=True,
    metavar="S",
    help="Seconds of DuckDB work one request may take (then 503).",
)
def serve(
    data: Path, host: str, port: int, page_max: int, stream_max: int, query_seconds: float
) -> None:
    """Serve the store over HTTP as JSON: /runs, /runs/RUN, /runs/RUN/hands (filters of
    paohuzi hands, paginated), /runs/RUN/hands.ndjson (a streamed export),
    /runs/RUN/hands/HAND (the replay file), /runs/RUN/hands/HAND/state?step=K&seat=S,
    /stats?run=RUN, /health, /version; the schema at /openapi.json, docs at /docs.
    Read-only: no run is ever added or changed. Needs pip install 'paohuzi[service]'.

    \b
    paohuzi serve
    paohuzi serve --data /srv/paohuzi --port 8080
    curl -s localhost:8000/runs
    """
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError as e:
        missing = getattr(e, "name", None) or "fastapi"
        raise input_error(
            f"paohuzi serve needs {missing}, which is not installed: pip install 'paohuzi[service]'"
        ) from None
    from replay.service.app import create_app
    from replay.service.limits import Limits

    limits = Limits(page_max=page_max, stream_max=stream_max, query_seconds=query_seconds)
    where = Path(data).resolve()
    if not where.is_dir():
        click.echo(f"note: no store at {where} yet (the API will say so)", err=True)
    app = create_app(data, limits)
    if port != 0:
        click.echo(f"paohuzi serve: http://{host}:{port}  (store {where}; Ctrl-C stops it)")
        uvicorn.run(app, host=host, port=port, log_level="warning")
        return
    # port 0: bind here, so that the line says the port the system chose
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, 0))
    except OSError as e:
        sock.close()
        raise input_error(f"cannot listen on {host}: {e.strerror or e}") from None
    port = sock.getsockname()[1]
    click.echo(f"paohuzi serve: http://{host}:{port}  (store {where}; Ctrl-C stops it)")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[sock])
