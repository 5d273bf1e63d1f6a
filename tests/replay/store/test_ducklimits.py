"""The product's own DuckDB connections are bounded (replay.store.ducklimits): memory and
spill space have documented defaults, raised by PAOHUZI_DUCKDB_MEMORY / PAOHUZI_DUCKDB_TEMP;
a query over the limit fails instead of growing; a bad value is one ``Error:`` line before
any command starts, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store.catalog import duck_connect
from replay.store.ducklimits import ENV, DuckLimitsError, duckdb_settings, failure_line
from replay.store.sizes import parse_size


def in_effect(con: duckdb.DuckDBPyConnection) -> dict[str, int | None]:
    rows = con.execute(
        "SELECT name, value FROM duckdb_settings() WHERE name IN"
        " ('memory_limit', 'max_temp_directory_size')"
    ).fetchall()
    return {name: parse_size(value) for name, value in rows}


def test_every_connection_has_the_default_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    for var, _, _ in ENV.values():
        monkeypatch.delenv(var, raising=False)
    con = duck_connect(":memory:")
    assert in_effect(con) == {"memory_limit": 4 << 30, "max_temp_directory_size": 16 << 30}


def test_the_variables_raise_the_limits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PAOHUZI_DUCKDB_MEMORY", "6GiB")
    monkeypatch.setenv("PAOHUZI_DUCKDB_TEMP", "100GB")
    con = duck_connect(str(tmp_path / "x.duckdb"))
    got = in_effect(con)
    assert got["memory_limit"] == 6 << 30
    # DuckDB prints the temp size in binary units, rounded to one decimal
    assert abs((got["max_temp_directory_size"] or 0) - 100 * 1000**3) < 0.1 * 1024**3


def test_a_query_over_the_limit_fails_instead_of_growing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAOHUZI_DUCKDB_MEMORY", "64MiB")
    monkeypatch.setenv("PAOHUZI_DUCKDB_TEMP", "0")
    con = duck_connect(":memory:")
    con.execute("SET threads = 1")
    with pytest.raises(duckdb.OutOfMemoryException):
        # about 400 MB of strings, held in one in-memory table: over 64 MiB, no spill allowed
        con.execute("CREATE TABLE t AS SELECT range AS i, repeat('x', 200) || range AS s"
                    " FROM range(2000000)")  # fmt: skip


@pytest.mark.parametrize(
    ("temp", "query", "named"),
    [
        # an in-memory table over the memory limit with no spill allowed: the spill limit
        ("0", "CREATE TABLE t AS SELECT range AS i, repeat('x', 200) || range AS s"
              " FROM range(2000000)", "PAOHUZI_DUCKDB_TEMP, 0"),
        # one aggregate that cannot spill: the memory limit
        ("16GiB", "SELECT string_agg(repeat('x', 200) || range, ',') FROM range(2000000)",
         "PAOHUZI_DUCKDB_MEMORY, 64MiB"),
    ],
)  # fmt: skip
def test_a_query_stopped_by_a_limit_names_the_variable(
    temp: str, query: str, named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAOHUZI_DUCKDB_MEMORY", "64MiB")
    monkeypatch.setenv("PAOHUZI_DUCKDB_TEMP", temp)
    con = duck_connect(":memory:")
    con.execute("SET threads = 1")
    with pytest.raises(duckdb.OutOfMemoryException) as caught:
        con.execute(query).fetchall()
    line = failure_line(caught.value)
    assert "\n" not in line and line.startswith("Out of Memory Error")
    assert line.endswith(f"(over {named}: raise it to let the query through)")
    assert (
        failure_line(duckdb.IOException("IO Error: no such file\nmore")) == "IO Error: no such file"
    )


@pytest.mark.parametrize(
    ("var", "value", "why"),
    [
        ("PAOHUZI_DUCKDB_MEMORY", "lots", "is not a size such as 4GiB or 512MB"),
        ("PAOHUZI_DUCKDB_MEMORY", "1MB", "is below the lowest usable value, 64 MiB"),
        ("PAOHUZI_DUCKDB_TEMP", "-1GB", "is not a size"),
    ],
)
def test_a_bad_value_is_named(
    var: str, value: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(DuckLimitsError, match=f"^{var}='{value}' {why}"):
        duckdb_settings({var: value})
    monkeypatch.setenv(var, value)
    with pytest.raises(DuckLimitsError, match=f"^{var}="):  # no connection is opened
        duck_connect(":memory:")


def test_a_bad_value_stops_a_command_before_it_writes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    res = CliRunner().invoke(
        main,
        ["simulate", "-n", "20", "--data", str(data)],
        env={"PAOHUZI_DUCKDB_MEMORY": "lots"},
    )
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert lines == ["Error: PAOHUZI_DUCKDB_MEMORY='lots' is not a size such as 4GiB or 512MB"]
    assert not data.exists()
