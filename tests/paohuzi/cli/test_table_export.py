"""``paohuzi hands`` and ``paohuzi stats`` write their rows as CSV and Parquet (issue 60):
``--format table|csv|json|parquet`` and ``--output PATH`` (as ``paohuzi export -o``: an
existing file only with ``--force``, a path that cannot be written one error line, exit 2;
standard output for table, csv and json), the rows the text shows."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("tables") / "data"
    res = CliRunner().invoke(main, ["simulate", "--data", str(d), "--run", "r", "-n", "40",
                                    "--seed", "5", "-w", "1", "-q", "-p", "heuristic,random,greedy"])  # fmt: skip
    assert res.exit_code == 0, res.output
    return d


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def ok(*args: str) -> Any:
    res = cli(*args)
    assert res.exit_code == 0, res.output
    return res


def one_error(res: Any) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    return lines[0]


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_hands_as_csv_and_parquet_are_the_listed_rows(data: Path, tmp_path: Path) -> None:
    doc = json.loads(ok("hands", "r", "--data", str(data), "--limit", "30", "--json").stdout)
    want = [
        {"hand": h["hand_id"], "outcome": h["outcome"], "winner": h["winner"],
         "source": h["source"], "huxi": h["huxi"], "fan": h["fan"], "score": h["score"],
         "mingtang": " ".join(h["mingtang"]) or None, "events": h["n_events"]}
        for h in doc["hands"]
    ]  # fmt: skip
    assert any(w["winner"] is not None for w in want) and any(w["winner"] is None for w in want)
    got = _csv(ok("hands", "r", "--data", str(data), "--limit", "30", "-f", "csv").stdout)
    assert got == [{k: "" if v is None else str(v) for k, v in w.items()} for w in want]
    table = ok("hands", "r", "--data", str(data), "--limit", "30").stdout.splitlines()
    assert len(table) == 1 + len(want) and table[0].split() == list(want[0])
    out = tmp_path / "hands.parquet"
    res = ok("hands", "r", "--data", str(data), "--limit", "30", "-o", str(out))
    assert res.stdout == "" and f"to {out}" in res.stderr
    assert pq.read_table(out).to_pylist() == want
    assert str(pq.read_table(out).schema.field("huxi").type) == "int64"
    text = tmp_path / "hands.csv"  # the suffix chooses the format
    ok("hands", "r", "--data", str(data), "--limit", "30", "-o", str(text))
    assert _csv(text.read_text(encoding="utf-8")) == got


def test_an_existing_file_needs_force_and_a_bad_path_is_one_line(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "s.csv"
    out.write_text("keep", encoding="utf-8")
    for cmd in (["hands", "r"], ["stats", "r"]):
        line = one_error(cli(*cmd, "--data", str(data), "-o", str(out)))
        assert line == f"Error: {out} exists; give --force to overwrite it"
        assert out.read_text(encoding="utf-8") == "keep"
    ok("stats", "r", "--data", str(data), "-o", str(out), "--force")
    assert out.read_text(encoding="utf-8").startswith("run,section,label,")
    missing = tmp_path / "no" / "such" / "x.csv"
    line = one_error(cli("hands", "r", "--data", str(data), "-o", str(missing)))
    assert line == f"Error: cannot write {missing}: no folder {missing.parent}"
    line = one_error(cli("stats", "r", "--data", str(data), "-f", "parquet"))
    assert "Parquet is binary" in line and "--output" in line
    line = one_error(cli("stats", "r", "--data", str(data), "-o", str(tmp_path)))
    assert "it is a folder" in line
    assert one_error(cli("hands", "r", "--data", str(data), "--json", "-f", "csv"))


def test_stats_rows_are_the_tables_numbers(data: Path, tmp_path: Path) -> None:
    (js,) = json.loads(ok("stats", "r", "--data", str(data), "--json").stdout)["runs"]
    rows = _csv(ok("stats", "r", "--data", str(data), "-f", "csv").stdout)
    by = {(r["section"], r["label"]): r for r in rows}
    assert int(by[("run", "hands")]["count"]) == js["hands"] == 40
    win = js["outcomes"]["win"]
    row = by[("outcome", "胡 (any win)")]
    assert (int(row["count"]), int(row["of"])) == (win["k"], win["n"])
    assert float(row["rate"]) == pytest.approx(win["p"]) and float(row["rate_lo"]) == win["lo"]
    for g in js["seats"] + js["dealer"]:
        r = by[("win rate", g["key"])]
        assert int(r["count"]) == g["win"]["k"] and float(r["mean"]) == pytest.approx(
            g["score"]["mean"]
        )
    for g in js["policy"]:
        assert ("win rate", f"policy {g['key']}") in by
    huxi = by[("winning hands", "胡息")]
    assert float(huxi["mean"]) == pytest.approx(js["winning"]["huxi"]["mean"]["mean"])
    assert float(huxi["p50"]) == js["winning"]["huxi"]["quantiles"][2]
    assert {r["section"] for r in rows} >= {"run", "outcome", "win rate", "名堂", "3提/5坎 天胡"}
    text = ok("stats", "r", "--data", str(data)).stdout  # the same labels as the text tables
    for r in rows:
        if r["section"] not in ("run",):
            assert r["label"] in text, r["label"]
    out = tmp_path / "stats.parquet"
    ok("stats", "r", "--data", str(data), "-o", str(out))
    table = pq.read_table(out).to_pylist()
    assert [(t["section"], t["label"]) for t in table] == [(r["section"], r["label"]) for r in rows]
    assert table[2]["count"] == int(rows[2]["count"])
