"""``paohuzi report`` at the small scale (replay.reference): every section, table and chart of
the document exists; its numbers come from the runs (recomputed here by plain SQL over the
hands; a run changed changes the document); the same runs give the same bytes; a damaged or
missing run is one line and leaves the document as it was."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb
import pytest
from catalog_helpers import catalog_mismatch
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.reference import plan as P
from replay.store.runs import open_store

SMALL = P.SCALES["small"]


def report(data: Path, out: Path, *more: str) -> Any:
    return CliRunner().invoke(
        main, ["report", "--data", str(data), "--out", str(out), "--scale", "small", "-q",
               "-w", "1", *more],
    )  # fmt: skip


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    root = tmp_path_factory.mktemp("reference")
    data, out = root / "data", root / "docs" / "REFERENCE.md"
    r = report(data, out)
    assert r.exit_code == 0, r.output
    return data, out, out.read_text(encoding="utf-8")


def hands(data: Path, study: P.Study) -> duckdb.DuckDBPyConnection:
    """A plain DuckDB connection with the study's hands as table ``h`` (its Parquet files,
    read directly: no catalog, no statistics layer)."""
    run = open_store(data).run(study.run_name())
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE h AS SELECT * FROM read_parquet($files)",
        {"files": [str(p) for p in sorted(run.path.glob("hands/*.parquet"))]},
    )
    return con


def study(key: str) -> P.Study:
    return next(s for s in P.studies(SMALL) if s.key == key)


def test_every_section_table_and_chart(made: tuple[Path, Path, str]) -> None:
    data, out, text = made
    for heading in ("# Reference statistics", "## Per preset", "## Rule effects",
                    "## Strength effects", "## Strength ladder", "## Skill against luck"):  # fmt: skip
        assert f"\n{heading}\n" in f"\n{text}", heading
    for preset in P.PRESETS:
        assert f"\n### {preset}\n" in text and f"| {preset} | `{P.strongest(preset)}` |" in text
        for chart in (f"reference/{preset}-huxi.svg", f"reference/{preset}-score.svg"):
            assert f"]({chart})" in text
            assert (out.parent / chart).read_text().startswith("<svg")
    for _, overrides, label in P.SWITCHES:
        assert f"| {label} (`{' '.join(overrides)}`) |" in text
    for policy in (*P.STRENGTHS, P.strength_search(SMALL)):
        assert f"| `{policy}` |" in text
    ladders = text.split("## Strength ladder")[1].split("\n## ")[0]
    for preset in SMALL.ladder_presets:  # a ratings table of every policy of each ladder
        ladder = ladders.split(f"\n### {preset}\n")[1].split("\n### ")[0]
        for policy in P.ladder_policies(SMALL, preset):
            assert f"| `{policy}` | " in ladder, (preset, policy)
    assert "`heuristic@tuned-luzhou`" in ladders and "`learned@luzhou`" in ladders
    for chart in ("reference/ladder.svg", "reference/ladder-luzhou.svg", "reference/skill.svg"):
        assert f"]({chart})" in text and (out.parent / chart).read_text().startswith("<svg")
    for s in P.studies(SMALL):  # each run named under its table, with its seed
        assert f"| `{s.run_name()}` | {s.seed} | {s.spec().hands_total:,} |" in text
    # the store's catalog, refreshed once after the last run, answers for them all
    assert catalog_mismatch(data) is None


def test_the_same_runs_give_the_same_bytes(made: tuple[Path, Path, str], tmp_path: Path) -> None:
    data, _, text = made
    manifests = {p: p.read_bytes() for p in data.glob("runs/*/manifest.json")}
    again = tmp_path / "again.md"
    r = report(data, again)  # every run found complete: none played, none rewritten
    assert r.exit_code == 0, r.output
    assert again.read_text(encoding="utf-8") == text
    assert {p: p.read_bytes() for p in data.glob("runs/*/manifest.json")} == manifests
    r = report(data, tmp_path / "third.md", "--no-play")
    assert r.exit_code == 0 and (tmp_path / "third.md").read_text(encoding="utf-8") == text


def test_one_figure_of_each_table_by_plain_sql(made: tuple[Path, Path, str]) -> None:
    data, _, text = made
    # per preset: the hunan 荒庄 rate (outcome 1)
    con = hands(data, study("preset.hunan"))
    k, n = con.execute("SELECT count(*) FILTER (WHERE outcome = 1), count(*) FROM h").fetchone()
    row = next(line for line in text.splitlines() if line.startswith("| hunan | `"))
    assert row.split(" | ")[4].startswith(f"{100 * k / n:.2f} % ["), (row, k, n)
    # the 4-player table: the dealer advantage counts the two other seats dealt cards (the
    # sitter never wins): the dealer's win minus half the others' wins, per hand
    con4 = hands(data, study("preset.hunan-4p"))
    (adv,) = con4.execute(
        "SELECT avg((outcome <> 1 AND winner = dealer)::INT"
        " - (outcome <> 1 AND winner <> dealer)::INT / 2.0) FROM h"
    ).fetchone()
    row4 = next(line for line in text.splitlines() if line.startswith("| hunan-4p | `"))
    assert row4.split(" | ")[6].startswith(f"{100 * adv:.2f} ["), (row4, adv)
    # the hunan section: seat 1's win rate
    k, n = con.execute("SELECT count(*) FILTER (WHERE winner = 1), count(*) FROM h").fetchone()
    section = text.split("\n### hunan\n")[1]
    assert f"| seat 1 | {100 * k / n:.2f} % [" in section
    # rule effects: 10 胡息, the 荒庄 rate minus hunan's, deal by deal
    base, switched = hands(data, study("effect.hunan")), hands(data, study("effect.min_huxi-10"))
    a = dict(base.execute("SELECT deal_id, (outcome = 1)::INT FROM h").fetchall())
    b = dict(switched.execute("SELECT deal_id, (outcome = 1)::INT FROM h").fetchall())
    assert a.keys() == b.keys()
    d = 100 * sum(b[k] - a[k] for k in a) / len(a)
    row = next(line for line in text.splitlines() if "(`min_huxi=10`)" in line)
    assert row.split(" | ")[1].strip("*").startswith(f"{d:+.2f} ["), (row, d)
    # each ladder: a policy's matches (deals over all its pairs on the preset), and the first
    # adjacent pair's ADP (the upper policy's mean score change per seat-hand minus the
    # lower's, per deal, averaged over the deals)
    section = text.split("## Strength ladder")[1].split("\n## ")[0]
    for preset in SMALL.ladder_presets:
        ladder = section.split(f"\n### {preset}\n")[1].split("\n### ")[0]
        pairs = [s for s in P.studies(SMALL) if s.section == "ladder" and s.preset == preset]
        deals = 0
        for s in pairs:
            if "random" in s.policies:
                (n,) = hands(data, s).execute("SELECT count(DISTINCT deal_id) FROM h").fetchone()
                deals += n
        assert "| `random` | " in ladder and f"| {deals:,} |" in next(
            line for line in ladder.splitlines() if "| `random` | " in line
        )
        row = next(line for line in ladder.splitlines() if line.count("| `") == 2)
        upper, lower = (c.strip(" `") for c in row.split(" | ")[:2])
        upper = upper.lstrip("| `")
        s = next(s for s in pairs if set(s.policies) == {upper, lower})
        seat_rows = " UNION ALL ".join(
            f"SELECT deal_id, policy_{i} AS p, delta_{i} AS d FROM h"
            for i in range(len(s.policies))
        )
        (adp,) = (
            hands(data, s)
            .execute(
                f"SELECT avg(a - b) FROM (SELECT deal_id, avg(d) FILTER (WHERE p = $u) AS a,"
                f" avg(d) FILTER (WHERE p = $l) AS b FROM ({seat_rows}) GROUP BY deal_id)",
                {"u": upper, "l": lower},
            )
            .fetchone()
        )
        assert row.split(" | ")[3].strip("*").startswith(f"{adp:+.2f} ["), (preset, row, adp)
    # skill against luck: greedy's mean score change per seat-hand
    con = hands(data, study("skill"))
    (g,) = con.execute(
        "SELECT avg(d) FROM (" + " UNION ALL ".join(
            f"SELECT delta_{i} AS d FROM h WHERE policy_{i} = 'greedy'" for i in range(3))
        + ")"
    ).fetchone()  # fmt: skip
    assert f"| `greedy` | {g:+.3f} |" in text.split("## Skill against luck")[1]
    # strength effects: random's mean 胡息 of a win
    con = hands(data, study("strength.random"))
    (mean,) = con.execute("SELECT avg(huxi) FROM h WHERE outcome <> 1").fetchone()
    row = next(line for line in text.splitlines() if line.startswith("| `random` |"))
    assert row.rstrip(" |").split(" | ")[-1].startswith(f"{mean:.2f} ["), (row, mean)


def test_another_run_changes_the_document(
    made: tuple[Path, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strength runs on other deals (another seed): those runs are played, and their
    table changes while the other sections stay as they were."""
    data, _, text = made
    monkeypatch.setattr(P, "STRENGTH_SEED", P.STRENGTH_SEED + 1)
    out = tmp_path / "other.md"
    r = report(data, out)
    assert r.exit_code == 0, r.output
    other = out.read_text(encoding="utf-8")
    head, tail = text.split("## Strength effects"), other.split("## Strength effects")
    # the header's total wall time counts the new runs' own (same runs and hands)
    wall = re.compile(r"hands, [\d,]+ minutes of wall time")
    assert wall.search(head[0]) and wall.search(tail[0])
    assert wall.sub("", head[0]) == wall.sub("", tail[0]) and head[1] != tail[1]


def test_a_damaged_or_missing_run_is_one_line(made: tuple[Path, Path, str], tmp_path: Path) -> None:
    data, out, text = made
    # a store without the runs, --no-play: the first missing run named
    r = report(tmp_path / "empty", tmp_path / "x.md", "--no-play")
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "report:" in r.output, r.output
    assert not (tmp_path / "x.md").exists()
    # a damaged shard: refused by name, the document left as it was
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    victim = study("effect.no-chouhu").run_name()
    shard = sorted((copy / "runs" / f"run={victim}" / "hands").glob("*.parquet"))[0]
    shard.write_bytes(shard.read_bytes()[:-100])
    kept = tmp_path / "kept.md"
    kept.write_text(text, encoding="utf-8")
    r = report(copy, kept, "--no-play")
    errors = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert r.exit_code == 2 and len(errors) == 1, r.output
    assert f"run {victim} is damaged" in errors[0] and "shard file hands/" in errors[0]
    assert kept.read_text(encoding="utf-8") == text
