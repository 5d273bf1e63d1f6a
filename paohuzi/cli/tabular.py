"""``--format table|csv|json|parquet`` and ``--output PATH`` of the commands that list rows
(``paohuzi hands``, ``paohuzi stats``): the rows the text table shows, as CSV or Parquet too.

A file is written as ``paohuzi export -o`` writes one (:mod:`replay.store.output`: a new file
atomically, an existing one only with ``--force``, a device or FIFO as a stream, a folder or
a missing folder refused in one line); ``-`` or no ``--output`` is standard output, which
takes every format but Parquet (binary). Without ``--format`` the output file's suffix
chooses (``.csv``, ``.parquet``, ``.json``), else the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.errors import input_error

FORMATS = ("table", "csv", "json", "parquet")
_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".json": "json"}


def output_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--format/-f``, ``--output/-o`` and ``--force``, as ``paohuzi export`` has them."""
    f = click.option("--force", is_flag=True, help="Overwrite an existing --output file.")(f)
    f = click.option(
        "--output",
        "-o",
        metavar="PATH",
        help="File to write (default and '-': stdout; Parquet needs a file); a device or FIFO"
        " is written as a stream.",
    )(f)
    return click.option(
        "--format",
        "-f",
        "fmt",
        type=click.Choice(FORMATS),
        default=None,
        help="table (default), csv, json or parquet; with -o FILE.csv / .parquet / .json that"
        " format is the default.",
    )(f)


@dataclass(frozen=True)
class Column:
    """A column of the rows: its name and Arrow type (``string``, ``int64``, ``float64``)."""

    name: str
    type: str = "string"


def choose_format(fmt: str | None, as_json: bool, output: str | None) -> str:
    """The format asked for: ``--format``, ``--json`` (the same as ``--format json``), the
    output file's suffix, else ``table``; one error line when they disagree."""
    if as_json:
        if fmt not in (None, "json"):
            raise input_error(f"--json and --format {fmt}: choose one")
        return "json"
    if fmt is not None:
        return fmt
    if output and output != "-":
        return _SUFFIXES.get(Path(output).suffix.lower(), "table")
    return "table"


def plan(fmt: str, output: str | None, force: bool) -> Any:
    """Where the output goes (:func:`replay.store.output.plan_output`), checked before any
    work is done: one error line for a path that cannot be written, a file that exists
    without ``--force``, or Parquet to standard output."""
    from engine.errors import PaohuziError
    from replay.store import output as out_file

    name = out_file.STDOUT if output is None else output
    if fmt == "parquet" and name == out_file.STDOUT:
        raise input_error(
            "Parquet is binary: give --output FILE.parquet (csv and json go to stdout)"
        )
    try:
        return out_file.plan_output(name, force)
    except PaohuziError as e:
        raise input_error(str(e)) from None


def encode(fmt: str, columns: Sequence[Column], rows: Sequence[Sequence[Any]]) -> bytes:
    """``rows`` (one value per column, None for none) as CSV (a header line, UTF-8) or
    Parquet (typed columns)."""
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([c.name for c in columns])
        w.writerows(["" if v is None else v for v in r] for r in rows)
        return buf.getvalue().encode("utf-8")
    if fmt == "parquet":
        import io

        import pyarrow as pa
        import pyarrow.parquet as pq

        types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64()}
        schema = pa.schema([(c.name, types[c.type]) for c in columns])
        data = {c.name: [r[i] for r in rows] for i, c in enumerate(columns)}
        sink = io.BytesIO()
        pq.write_table(pa.table(data, schema=schema), sink)
        return sink.getvalue()
    raise ValueError(f"no rows encoding for {fmt!r}")


def write(target: Any, data: bytes, what: str) -> None:
    """``data`` written where :func:`plan` planned (one error line if it cannot be); a file
    named on stderr, as ``paohuzi export`` does."""
    from engine.errors import PaohuziError
    from replay.store import output as out_file

    try:
        out_file.write_output(target, data)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    if target.how != "stdout":
        click.echo(f"wrote {what} to {target.name}", err=True)


def emit(target: Any, data: str | bytes, what: str) -> None:
    """Text or bytes to where ``target`` says: standard output (text with the characters a
    terminal acts on escaped), or a file (:func:`write`)."""
    from engine.errors import printable

    if target.how == "stdout":
        text = data if isinstance(data, str) else printable(data.decode("utf-8"), "\n")  # csv
        click.echo(text, nl=False)
        return
    write(target, data.encode("utf-8") if isinstance(data, str) else data, what)
