"""``paohuzi serve``: the store's runs, hands and statistics over HTTP, read-only
(:mod:`paohuzi.service`, docs/SERVICE.md). FastAPI and uvicorn are the optional ``service``
extra; neither is imported until the command runs."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import click

from paohuzi.cli.errors import input_error
from paohuzi.service.limits import (
    HEADER_BYTES,
    HEADER_SECONDS,
    INGEST_AT_ONCE,
    INGEST_BODY_SECONDS,
    INGEST_BYTES,
    INGEST_LINE_BYTES,
    INGEST_LINES,
    INGEST_LOCK_SECONDS,
    KEEP_ALIVE_SECONDS,
    MAX_CONNECTIONS,
    PAGE_MAX,
    QUERY_SECONDS,
    STREAM_MAX,
)
from replay.store.layout import data_option

#: The environment variable that holds the ingest token (``--ingest-token-file`` wins).
TOKEN_ENV = "PAOHUZI_INGEST_TOKEN"

#: The shortest token accepted, and the largest token file read.
TOKEN_MIN = 16
TOKEN_FILE_MAX = 4096

#: Connections the system queues before the server accepts them (uvicorn's default).
BACKLOG = 2048


def ingest_token(path: Path | None) -> str | None:
    """The ingest token: the first line of ``path`` (a regular file of at most 4 KiB), else
    ``$PAOHUZI_INGEST_TOKEN``; None when neither is given (ingest disabled). A token of
    fewer than 16 characters, with spaces inside, or with a character other than printable
    ASCII (the service reads a header's bytes as Latin-1: a client's UTF-8 would never
    match it) is refused (one line, exit 2)."""
    if path is not None:
        from replay.store.files import read_regular

        try:
            text = read_regular(path, TOKEN_FILE_MAX).decode("utf-8-sig")  # a BOM is no part
        except (OSError, UnicodeDecodeError) as e:
            why = getattr(e, "strerror", None) or str(e)
            raise input_error(f"cannot read the ingest token file {path}: {why}") from None
        lines = text.strip().splitlines()
        where = f"the ingest token file {path}"
        value = lines[0].strip() if lines else ""
    else:
        value = os.environ.get(TOKEN_ENV, "").strip()
        where = f"${TOKEN_ENV}"
        if not value:
            return None
    printable = value.isascii() and value.isprintable()
    if len(value) < TOKEN_MIN or not printable or any(c.isspace() for c in value):
        raise input_error(
            f"{where}: a token is at least {TOKEN_MIN} printable ASCII characters without"
            " spaces (e.g. python -c 'import secrets; print(secrets.token_urlsafe())')"
        )
    return value


@click.command(short_help="Serve the store's runs, hands and statistics over HTTP.")
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
@click.option(
    "--ingest-token-file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help=f"Enable POST /runs/RUN/hands with the token in FILE (default: ${TOKEN_ENV}; neither:"
    " ingest disabled, the service writes nothing).",
)
@click.option(
    "--ingest-bytes",
    type=click.IntRange(min=1),
    default=INGEST_BYTES,
    show_default=True,
    metavar="N",
    help="Largest ingest request body.",
)
@click.option(
    "--ingest-lines",
    type=click.IntRange(min=1),
    default=INGEST_LINES,
    show_default=True,
    metavar="N",
    help="Most replay files in one JSON-lines ingest.",
)
@click.option(
    "--ingest-line-bytes",
    type=click.IntRange(min=1),
    default=INGEST_LINE_BYTES,
    show_default=True,
    metavar="N",
    help="Longest line (replay file) of a JSON-lines ingest.",
)
@click.option(
    "--ingest-lock-seconds",
    type=click.FloatRange(min=0),
    default=INGEST_LOCK_SECONDS,
    show_default=True,
    metavar="S",
    help="Seconds an ingest waits for another one into the same run (then 503).",
)
@click.option(
    "--ingest-at-once",
    type=click.IntRange(min=1),
    default=INGEST_AT_ONCE,
    show_default=True,
    metavar="N",
    help="Ingests received and verified at once (each holds its body; then 503).",
)
@click.option(
    "--ingest-body-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=INGEST_BODY_SECONDS,
    show_default=True,
    metavar="S",
    help="Seconds an ingest's body may take to arrive (then 408).",
)
@click.option(
    "--header-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=HEADER_SECONDS,
    show_default=True,
    metavar="S",
    help="Seconds a request's head may take to arrive (then 408, and the connection closed).",
)
@click.option(
    "--header-bytes",
    type=click.IntRange(min=1),
    default=HEADER_BYTES,
    show_default=True,
    metavar="N",
    help="Largest request head: request line and headers (then 431).",
)
@click.option(
    "--keep-alive-seconds",
    type=click.IntRange(min=1),
    default=KEEP_ALIVE_SECONDS,
    show_default=True,
    metavar="S",
    help="Seconds an idle keep-alive connection is kept open.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(min=1),
    default=MAX_CONNECTIONS,
    show_default=True,
    metavar="N",
    help="Connections served at once (a request on any other: 503).",
)
def serve(
    data: Path,
    host: str,
    port: int,
    page_max: int,
    stream_max: int,
    query_seconds: float,
    ingest_token_file: Path | None,
    ingest_bytes: int,
    ingest_lines: int,
    ingest_line_bytes: int,
    ingest_lock_seconds: float,
    ingest_at_once: int,
    ingest_body_seconds: float,
    header_seconds: float,
    header_bytes: int,
    keep_alive_seconds: int,
    max_connections: int,
) -> None:
    """Serve the store over HTTP as JSON: /runs, /runs/RUN, /runs/RUN/hands (filters of
    paohuzi hands, paginated), /runs/RUN/hands.ndjson (a streamed export),
    /runs/RUN/hands/HAND (the replay file), /runs/RUN/hands/HAND/state?step=K&seat=S,
    /stats?run=RUN, /health, /version; the schema at /openapi.json, docs at /docs.
    Read-only unless an ingest token is given (--ingest-token-file or $PAOHUZI_INGEST_TOKEN):
    then POST /runs/RUN/hands with that bearer token verifies replay files and adds their
    hands to the run of imported hands RUN. Needs pip install 'paohuzi[service]'.

    \b
    paohuzi serve
    paohuzi serve --data /srv/paohuzi --port 8080
    paohuzi serve --ingest-token-file /etc/paohuzi/token
    curl -s localhost:8000/runs
    """
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        missing = getattr(e, "name", None) or "fastapi"
        raise input_error(
            f"paohuzi serve needs {missing}, which is not installed: pip install 'paohuzi[service]'"
        ) from None
    from paohuzi.service import server
    from paohuzi.service.app import create_app
    from paohuzi.service.limits import Limits

    token = ingest_token(ingest_token_file)
    limits = Limits(
        page_max=page_max,
        stream_max=stream_max,
        query_seconds=query_seconds,
        ingest_bytes=ingest_bytes,
        ingest_lines=ingest_lines,
        ingest_line_bytes=ingest_line_bytes,
        ingest_lock_seconds=ingest_lock_seconds,
        ingest_at_once=ingest_at_once,
        ingest_body_seconds=ingest_body_seconds,
        header_seconds=header_seconds,
        header_bytes=header_bytes,
        keep_alive_seconds=keep_alive_seconds,
        max_connections=max_connections,
    )
    where = Path(data).resolve()
    if not where.is_dir():
        click.echo(f"note: no store at {where} yet (the API will say so)", err=True)
    app = create_app(data, limits, token)
    if token is not None:
        click.echo("note: ingest enabled (POST /runs/RUN/hands with the token)", err=True)
    # listening before the line is printed: a client that reads it may connect at once
    # (with --port 0, the line says the port the system chose)
    sock = listen(host, port)
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"paohuzi serve: http://{shown}:{port}  (store {where}; Ctrl-C stops it)")
    server.run(app, sock, limits)


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (0: any free port) and listening; one Error
    line (exit 2) if it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as e:
        sock.close()
        raise input_error(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    return sock
