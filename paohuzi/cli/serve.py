"""``paohuzi serve``: the store's runs, hands and statistics over HTTP, read-only
(:mod:`paohuzi.service`, docs/SERVICE.md). FastAPI and uvicorn are the optional ``service``
extra; neither is imported until the command runs."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import click

from paohuzi.cli.errors import input_error
from paohuzi.cli.options import refresh_option, renamed_option
from paohuzi.service.limits import (
    HEADER_BYTES,
    HEADER_SECONDS,
    IMPORT_AT_ONCE,
    IMPORT_BODY_SECONDS,
    IMPORT_BYTES,
    IMPORT_LINE_BYTES,
    IMPORT_LINES,
    IMPORT_LOCK_SECONDS,
    KEEP_ALIVE_SECONDS,
    MAX_CONNECTIONS,
    PAGE_MAX,
    QUERY_SECONDS,
    STREAM_MAX,
)
from replay.store.layout import data_option

#: The environment variable that holds the import token (``--import-token-file`` wins), and
#: its former name, still read when the first is not set.
TOKEN_ENV = "PAOHUZI_IMPORT_TOKEN"
TOKEN_ENV_OLD = "PAOHUZI_INGEST_TOKEN"

#: The shortest token accepted, and the largest token file read.
TOKEN_MIN = 16
TOKEN_FILE_MAX = 4096

#: Connections the system queues before the server accepts them (uvicorn's default).
BACKLOG = 2048


def import_token(path: Path | None) -> str | None:
    """The import token: the first line of ``path`` (a regular file of at most 4 KiB), else
    ``$PAOHUZI_IMPORT_TOKEN`` (or, unset, ``$PAOHUZI_INGEST_TOKEN``, its former name); None
    when none is given (import disabled). A token of
    fewer than 16 characters, with spaces inside, or with a character other than printable
    ASCII (the service reads a header's bytes as Latin-1: a client's UTF-8 would never
    match it) is refused (one line, exit 2)."""
    if path is not None:
        from replay.store.files import read_regular

        try:
            text = read_regular(path, TOKEN_FILE_MAX).decode("utf-8-sig")  # a BOM is no part
        except (OSError, UnicodeDecodeError) as e:
            why = getattr(e, "strerror", None) or str(e)
            raise input_error(f"cannot read the import token file {path}: {why}") from None
        lines = text.strip().splitlines()
        where = f"the import token file {path}"
        value = lines[0].strip() if lines else ""
    else:
        env = TOKEN_ENV if TOKEN_ENV in os.environ else TOKEN_ENV_OLD
        value = os.environ.get(env, "").strip()
        where = f"${env}"
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
@renamed_option(
    "--import-token-file",
    former="--ingest-token-file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help=f"Enable POST /runs/RUN/hands with the token in FILE (default: ${TOKEN_ENV}; neither:"
    " import disabled, the service writes nothing).",
)
@renamed_option(
    "--import-bytes",
    former="--ingest-bytes",
    type=click.IntRange(min=1),
    default=IMPORT_BYTES,
    show_default=True,
    metavar="N",
    help="Largest import request body.",
)
@renamed_option(
    "--import-lines",
    former="--ingest-lines",
    type=click.IntRange(min=1),
    default=IMPORT_LINES,
    show_default=True,
    metavar="N",
    help="Most replay files in one JSON-lines import.",
)
@renamed_option(
    "--import-line-bytes",
    former="--ingest-line-bytes",
    type=click.IntRange(min=1),
    default=IMPORT_LINE_BYTES,
    show_default=True,
    metavar="N",
    help="Longest line (replay file) of a JSON-lines import.",
)
@renamed_option(
    "--import-lock-seconds",
    former="--ingest-lock-seconds",
    type=click.FloatRange(min=0),
    default=IMPORT_LOCK_SECONDS,
    show_default=True,
    metavar="S",
    help="Seconds an import waits for another one into the same run (then 503).",
)
@renamed_option(
    "--import-at-once",
    former="--ingest-at-once",
    type=click.IntRange(min=1),
    default=IMPORT_AT_ONCE,
    show_default=True,
    metavar="N",
    help="Imports received and verified at once (each holds its body; then 503).",
)
@renamed_option(
    "--import-body-seconds",
    former="--ingest-body-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=IMPORT_BODY_SECONDS,
    show_default=True,
    metavar="S",
    help="Seconds an import's body may take to arrive (then 408).",
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
    help="Connections served at once (a request on any other: 503, but /health).",
)
@refresh_option
def serve(
    data: Path,
    host: str,
    port: int,
    page_max: int,
    stream_max: int,
    query_seconds: float,
    import_token_file: Path | None,
    import_bytes: int,
    import_lines: int,
    import_line_bytes: int,
    import_lock_seconds: float,
    import_at_once: int,
    import_body_seconds: float,
    header_seconds: float,
    header_bytes: int,
    keep_alive_seconds: int,
    max_connections: int,
    refresh: float | None,
) -> None:
    """Serve the store over HTTP as JSON: /runs, /runs/RUN, /runs/RUN/hands (filters of
    paohuzi hands, paginated), /runs/RUN/hands.ndjson (a streamed export),
    /runs/RUN/hands/HAND (the replay file), /runs/RUN/hands/HAND/state?step=K&seat=S,
    /stats?run=RUN, /health, /version; the schema at /openapi.json, docs at /docs.
    Read-only unless an import token is given (--import-token-file or $PAOHUZI_IMPORT_TOKEN):
    then POST /runs/RUN/hands with that bearer token imports replay files as paohuzi import
    does, verified, into the run of imported hands RUN. Needs pip install 'paohuzi[service]'.

    \b
    paohuzi serve
    paohuzi serve --data /srv/paohuzi --port 8080
    paohuzi serve --import-token-file /etc/paohuzi/token
    curl -s localhost:8000/runs
    """
    try:
        import fastapi  # noqa: F401
        import fastapi_offline  # noqa: F401 - /docs' files
        import uvicorn  # noqa: F401
    except ImportError as e:
        missing = getattr(e, "name", None) or "fastapi"
        raise input_error(
            f"paohuzi serve needs {missing}, which is not installed: pip install 'paohuzi[service]'"
        ) from None
    from paohuzi.service import server
    from paohuzi.service.app import create_app
    from paohuzi.service.limits import Limits

    token = import_token(import_token_file)
    limits = Limits(
        page_max=page_max,
        stream_max=stream_max,
        query_seconds=query_seconds,
        import_bytes=import_bytes,
        import_lines=import_lines,
        import_line_bytes=import_line_bytes,
        import_lock_seconds=import_lock_seconds,
        import_at_once=import_at_once,
        import_body_seconds=import_body_seconds,
        header_seconds=header_seconds,
        header_bytes=header_bytes,
        keep_alive_seconds=keep_alive_seconds,
        max_connections=max_connections,
    )
    where = Path(data).resolve()
    if not where.is_dir():
        click.echo(f"note: no store at {where} yet (the API will say so)", err=True)
    try:
        app = create_app(data, limits, token, refresh)
    except ValueError as e:
        raise input_error(str(e)) from None
    if token is not None:
        click.echo("note: import enabled (POST /runs/RUN/hands with the token)", err=True)
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
