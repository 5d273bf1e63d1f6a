"""``paohuzi stats``: numbers checked against an independent pandas recomputation from the
Parquet shards, the text and JSON output, and one-line errors (exit 2) on bad input."""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.analysis.stats import QUANTILES, Rate, RunStats, run_stats
from replay.store.runs import open_store

# A seed whose first deal (session 0) is an automatic 3提/5坎 天胡 won by the 下家 (the dealer
# is seat 1, the winner seat 2); found by search over seeds with the engine.
AUTO_SEED = 45143


def _simulate(data: Path, *args: str) -> None:
    r = CliRunner().invoke(main, ["simulate", "--data", str(data), "-w", "1", "-q", *args])
    assert r.exit_code == 0, r.output


@pytest.fixture(scope="session")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("stats") / "data"
    _simulate(data, "-n", "160", "--seed", "5", "--policies", "greedy", "--run", "plain")
    _simulate(
        data, "-n", "40", "--seed", "6", "--policies", "heuristic,random,greedy",
        "--duplicate", "--run", "dup",
    )  # fmt: skip
    _simulate(data, "-n", "48", "--seed", "7", "--rules", "hunan-4p", "--run", "four")
    _simulate(data, "-n", "4", "--seed", str(AUTO_SEED), "--duplicate", "--run", "auto")
    return data


@pytest.fixture(scope="session")
def all_stats(store_dir: Path) -> dict[str, RunStats]:
    return {s.run: s for s in run_stats(open_store(store_dir))}


def _hands(store_dir: Path, run: str) -> pd.DataFrame:
    return open_store(store_dir).run(run).read_table("hands").to_pandas()


def _seat_rows(h: pd.DataFrame, players: int) -> pd.DataFrame:
    """One row per playing seat per hand, built with pandas (no SQL)."""
    parts = []
    for s in range(players):
        p = pd.DataFrame(
            {
                "hand_id": h.hand_id,
                "deal_id": h.deal_id,
                "dealer": h.dealer,
                "seat": s,
                "policy": h[f"policy_{s}"],
                "delta": h[f"delta_{s}"].astype(float),
                "won": h.winner.eq(s).fillna(False).astype(bool),
            }
        )
        if players == 4:
            p = p[(h.dealer + 2) % 4 != s]
        parts.append(p)
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("run", ["plain", "dup", "four", "auto"])
def test_counts_match_pandas(store_dir: Path, all_stats: dict[str, RunStats], run: str) -> None:
    st = all_stats[run]
    h = _hands(store_dir, run)
    assert st.hands == len(h)
    assert st.deals == h.deal_id.nunique()
    o = st.outcomes
    assert o["huangzhuang"].k == (h.outcome == 1).sum()
    assert o["win"].k == (h.outcome != 1).sum() == h.winner.notna().sum()
    assert o["hu"].k + o["tianhu"].k + o["tianhu_auto"].k == o["win"].k
    for r in o.values():
        assert r.n == len(h) and r.lo <= r.p <= r.hi

    seats = _seat_rows(h, st.players)
    by_seat = {g.key: g for g in st.seats}
    for s, grp in seats.groupby("seat"):
        g = by_seat[f"seat {s}"]
        assert (g.win.k, g.win.n) == (grp.won.sum(), len(grp))
        assert g.score.mean == pytest.approx(grp.delta.mean())
    dealer = {g.key: g for g in st.dealer}
    is_dealer = seats.seat == seats.dealer
    assert dealer["dealer"].win.k == seats.won[is_dealer].sum() == (h.winner == h.dealer).sum()
    assert dealer["non-dealer"].win.n == (~is_dealer).sum() == 2 * len(h)
    # Zero-sum settlement: the per-seat means, weighted by seat-hands, add up to 0.
    assert sum(g.score.mean * g.score.n for g in st.seats) == pytest.approx(0, abs=1e-6)


@pytest.mark.parametrize("run", ["plain", "dup"])
def test_winning_distributions_match_pandas(
    store_dir: Path, all_stats: dict[str, RunStats], run: str
) -> None:
    st = all_stats[run]
    wins = _hands(store_dir, run).query("outcome != 1")
    assert len(wins) > 5
    for col in ("huxi", "deng", "fan", "score"):
        d = st.winning[col]
        v = wins[col].astype(float)
        assert d.mean.mean == pytest.approx(v.mean())
        assert d.mean.lo < d.mean.mean < d.mean.hi or v.nunique() == 1
        assert (d.min, d.max) == (v.min(), v.max())
        # The inverse empirical distribution function (Hyndman–Fan type 1): the smallest value
        # with at least a share q of the sample at or below it, the ⌈n·q⌉-th order statistic.
        srt = sorted(v)
        inv = tuple(srt[max(math.ceil(len(srt) * q - 1e-9), 1) - 1] for q in QUANTILES)
        assert d.quantiles == inv
    assert st.zimo is not None and st.zimo.k == wins.zimo.sum()
    names = {m.pinyin: m.share for m in st.mingtang}
    from replay.schema import MINGTANG_BITS

    for pinyin, share in names.items():
        expected = (
            (wins.mingtang == 0).sum()
            if pinyin == "pinghu"
            else (wins.mingtang.astype(int) // (1 << MINGTANG_BITS[pinyin]) % 2).sum()
        )
        assert (share.k, share.n) == (expected, len(wins))
    # Half 花样 (the hunan preset): no full-level 名堂 rows.
    assert "dazihu" not in names and "duiduihu" in names


def test_policies_and_paired_differences(store_dir: Path, all_stats: dict[str, RunStats]) -> None:
    st = all_stats["dup"]
    assert st.duplicate and st.rotations == 3 and st.cluster == "deal"
    h = _hands(store_dir, "dup")
    seats = _seat_rows(h, 3)
    pol = {g.key: g for g in st.policy}
    assert set(pol) == {"greedy", "heuristic", "random"}
    for name, grp in seats.groupby("policy"):
        assert (pol[name].win.k, pol[name].win.n) == (grp.won.sum(), len(grp))
        assert pol[name].score.mean == pytest.approx(grp.delta.mean())
    per = seats.groupby(["deal_id", "policy"]).agg(w=("won", "mean"), y=("delta", "mean"))
    per = per.unstack("policy")
    assert [(p.a, p.b) for p in st.paired] == [
        ("greedy", "heuristic"),
        ("greedy", "random"),
        ("heuristic", "random"),
    ]
    for p in st.paired:
        dw = per["w"][p.a] - per["w"][p.b]
        dy = per["y"][p.a] - per["y"][p.b]
        assert p.deals == len(dw) == 40
        assert p.win_diff.mean == pytest.approx(dw.mean())
        assert p.score_diff.mean == pytest.approx(dy.mean())
        half = 1.959964 * dy.std(ddof=1) / math.sqrt(len(dy))
        assert p.score_diff.hi - p.score_diff.mean == pytest.approx(half, rel=1e-5)
    # A single policy: no policy table, no pairs.
    assert all_stats["plain"].policy == [] and all_stats["plain"].paired == []


def test_duplicate_intervals_count_deals(all_stats: dict[str, RunStats]) -> None:
    # 120 hands in 40 deals: the interval is as wide as Wilson on 40, not on 120.
    win = all_stats["dup"].outcomes["win"]
    narrow = Rate.of(win.k, win.n)
    assert win.hi - win.lo > 1.5 * (narrow.hi - narrow.lo)


def test_four_players_skip_the_sitter(store_dir: Path, all_stats: dict[str, RunStats]) -> None:
    st = all_stats["four"]
    assert st.players == 4
    assert sum(g.win.n for g in st.seats) == 3 * st.hands
    h = _hands(store_dir, "four")
    assert not ((h.winner.notna()) & (h.winner == (h.dealer + 2) % 4)).any()


def test_auto_tianhu_counts_deals_and_shows_exact_odds(all_stats: dict[str, RunStats]) -> None:
    st = all_stats["auto"]
    a = st.auto_tianhu
    assert a is not None
    # Deal 0 is a 3提/5坎 天胡 in all 3 rotations: 3 hands, but 1 deal of 4.
    assert st.outcomes["tianhu_auto"].k == 3
    assert (a.any.k, a.any.n) == (1, 4)
    assert (a.dealer.k, a.non_dealer.k) == (0, 1)
    assert a.exact_dealer == pytest.approx(9.3086e-5, rel=1e-4)
    assert a.exact_any == pytest.approx(a.exact_dealer + a.exact_non_dealer)
    assert all_stats["plain"].auto_tianhu.exact_any == pytest.approx(1.518e-4, rel=1e-3)


def test_text_output(store_dir: Path) -> None:
    r = CliRunner().invoke(main, ["stats", "plain", "dup", "--data", str(store_dir)])
    assert r.exit_code == 0, r.output
    out = r.output
    assert out.index("run plain") < out.index("run dup")
    for needle in ("荒庄", "胡 (any win)", "seat 0", "non-dealer", "胡息", "等", "名堂", "平胡",
                   "3提/5坎 天胡", "9.309e-05", "greedy − random", "policy heuristic"):  # fmt: skip
        assert needle in out, needle
    assert "run four" not in out


def test_json_output(store_dir: Path, all_stats: dict[str, RunStats]) -> None:
    r = CliRunner().invoke(main, ["stats", "--json", "--data", str(store_dir)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)  # strict JSON: NaN would have been refused by allow_nan=False
    runs = {d["run"]: d for d in doc["runs"]}
    assert set(runs) == {"plain", "dup", "four", "auto"}
    assert runs["plain"] == json.loads(json.dumps(all_stats["plain"].to_dict()))
    assert runs["plain"]["outcomes"]["win"]["p"] == all_stats["plain"].outcomes["win"].p
    assert runs["auto"]["auto_tianhu"]["any"]["k"] == 1


def test_env_data_dir(store_dir: Path) -> None:
    r = CliRunner().invoke(main, ["stats", "auto"], env={"PAOHUZI_DATA": str(store_dir)})
    assert r.exit_code == 0, r.output


def _fails_in_one_line(args: list[str], *needles: str) -> None:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.output
    for n in needles:
        assert n in lines[0]


def test_unknown_run(store_dir: Path) -> None:
    _fails_in_one_line(["stats", "nope", "--data", str(store_dir)], "no run 'nope'", "plain")


def test_run_name_is_never_sql(store_dir: Path) -> None:
    _fails_in_one_line(["stats", "x' OR '1'='1", "--data", str(store_dir)], "no run")


def test_missing_store(tmp_path: Path) -> None:
    _fails_in_one_line(["stats", "--data", str(tmp_path / "absent")], "no store")


def test_empty_store(tmp_path: Path) -> None:
    _fails_in_one_line(["stats", "--data", str(tmp_path)], "no runs")


def test_corrupt_shard(store_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(store_dir, copy)
    shard = next((copy / "runs" / "run=plain" / "hands").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[:100])
    _fails_in_one_line(["stats", "plain", "--data", str(copy)])


def test_missing_shard(store_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(store_dir, copy)
    next((copy / "runs" / "run=dup" / "events").glob("*.parquet")).unlink()
    _fails_in_one_line(["stats", "dup", "--data", str(copy)], "missing")


def test_read_only_store(store_dir: Path, tmp_path: Path) -> None:
    # stats writes nothing: it works on a read-only copy and leaves every file as it was.
    copy = tmp_path / "data"
    shutil.copytree(store_dir, copy)
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
    for p in [copy, *copy.rglob("*")]:
        os.chmod(p, p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        r = CliRunner().invoke(main, ["stats", "plain", "--data", str(copy)])
        assert r.exit_code == 0, r.output
        assert {p: p.stat().st_mtime_ns for p in copy.rglob("*")} == before
    finally:
        for p in [copy, *copy.rglob("*")]:
            os.chmod(p, p.stat().st_mode | stat.S_IWUSR)


def test_doctests() -> None:
    import doctest

    import replay.analysis.stats

    result = doctest.testmod(replay.analysis.stats, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
