"""``paohuzi play`` and the policy specs it and others read (issue 59, parts 4 and 5, and the
play-related risks of its break test): a data file never chooses code (a table's journal
naming a ``module:Class`` bot imported it on ``--resume``); a plug-in is refused before it is
imported wherever one is not accepted (``play --opponents``, ``--compare``, ``tune`` and
``distill --baseline``); ``DATA/play`` is checked as ``runs/`` is; ``--resume`` can name a
table and skips broken ones, ``--discard`` removes one, ``doctor`` lists ``play/``; an empty
``runs/`` folder makes no store; ``--seed`` is 0 … 2⁶⁴−1; the deal of the day comes from the
store's secret and is published as a commitment, its seed revealed after the hand."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import stat
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main

MOVES = "1\n" * 300  # the first option at every decision: always legal
DAY = dt.date(2026, 12, 5)


def _cli(*args: str, stdin: str = "") -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), input=stdin)
    return r.exit_code, r.stdout, r.stderr


def _one_error(code: int, out: str, err: str) -> str:
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err, out + err
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    return err.strip()


def _plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_class: bool = True
) -> tuple[str, Path]:
    """A module on sys.path that writes a marker file when imported: (its spec, the marker)."""
    name = f"plugin_{uuid.uuid4().hex[:12]}"
    mods = tmp_path / "mods"
    mods.mkdir(exist_ok=True)
    marker = tmp_path / f"{name}.imported"
    body = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('imported')\n"
    if with_class:
        body += "class Bot:\n    name = 'bot'\n    def act(self, o, legal, rng):\n        return legal[0]\n"
    (mods / f"{name}.py").write_text(body)
    monkeypatch.syspath_prepend(str(mods))
    return f"{name}:Bot", marker


def _table(
    data: Path, seats: list[str], name: str = "20260101T000000-ann-0", seed: int = 7
) -> Path:
    (data / "play").mkdir(parents=True, exist_ok=True)
    path = data / "play" / f"{name}.jsonl"
    head = {"format": "paohuzi-play", "version": 1, "rules": {"preset": "hunan", "set": []},
            "seed": seed, "dealer": 0, "seats": seats, "run": "play", "daily": None}  # fmt: skip
    path.write_text(json.dumps(head) + "\n")
    return path


def _cut(data: Path, *extra: str, moves: int = 2) -> Path:
    """A hand stopped after ``moves`` decisions: its table's file."""
    before = set((data / "play").glob("*.jsonl")) if (data / "play").is_dir() else set()
    code, out, err = _cli("play", "--data", str(data), "--name", "ann", "--compare", "none",
                          "--no-review", *extra, stdin="1\n" * moves)  # fmt: skip
    assert code == 130, out + err
    (new,) = set((data / "play").glob("*.jsonl")) - before
    return new


# ---------------------------------------------------------------------------------------------
# 7. A saved table imports code
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("with_class", [True, False])
def test_a_journal_naming_a_module_imports_nothing_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_class: bool
) -> None:
    # it imported the module (which ran), then printed a traceback and exited 1 (no class)
    spec, marker = _plugin(tmp_path, monkeypatch, with_class)
    data = tmp_path / "data"
    path = _table(data, ["human:ann", spec, "heuristic"])
    code, out, err = _cli("play", "--data", str(data), "--resume", "--compare", "none",
                          "--no-review", stdin=MOVES)  # fmt: skip
    line = _one_error(code, out, err)
    assert path.name in line and "module:Class" in line, line
    assert not marker.exists()
    assert path.read_text().count("\n") == 1  # the table is kept as it was


def test_a_journal_naming_a_module_is_refused_by_the_library_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the Play page reads the same files (Journal.open, advance): nothing imported either
    from replay.play.table import Journal, TableError

    spec, marker = _plugin(tmp_path, monkeypatch)
    path = _table(tmp_path, ["human:ann", "heuristic", f"search@4/{spec}"], "a")
    with pytest.raises(TableError):
        Journal.open(path)
    path = _table(tmp_path, ["human:ann", spec, "heuristic"], "b")
    with pytest.raises(TableError, match="module:Class"):
        Journal.open(path)
    assert not marker.exists()


# ---------------------------------------------------------------------------------------------
# A plug-in refused before it is imported where none is accepted
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--opponents", "--compare"])
def test_play_refuses_a_plugin_before_importing_it_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    spec, marker = _plugin(tmp_path, monkeypatch)
    data = tmp_path / "data"
    code, out, err = _cli("play", "--data", str(data), "--seed", "3", option, spec,
                          "--no-review", stdin=MOVES)  # fmt: skip
    line = _one_error(code, out, err)
    assert option in line and "module:Class" in line, line
    assert not marker.exists() and not data.exists()


def test_new_deal_and_compare_refuse_a_plugin_before_importing_it_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the Play page's form (a browser's text) goes through these
    from engine.errors import InvalidNotation
    from replay.play.table import bots_to_compare, new_deal

    spec, marker = _plugin(tmp_path, monkeypatch)
    with pytest.raises(InvalidNotation, match="module:Class"):
        new_deal("hunan", (), 0, spec, 3, False, "play", "ann")
    with pytest.raises(InvalidNotation, match="module:Class"):
        bots_to_compare(f"heuristic,{spec}", "hunan")
    assert not marker.exists()


@pytest.mark.parametrize("command", ["tune", "distill"])
def test_baseline_refuses_a_plugin_before_importing_it_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    spec, marker = _plugin(tmp_path, monkeypatch)
    out_dir = tmp_path / "out"
    line = _one_error(*_cli(command, str(out_dir), "--baseline", spec))
    assert "--baseline" in line and "module:Class" in line, line
    assert not marker.exists() and not out_dir.exists()


def test_a_plugin_still_plays_where_it_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # simulate's reference engine takes module:Class from the command line, as documented
    spec, marker = _plugin(tmp_path, monkeypatch)
    code, out, err = _cli("simulate", "--data", str(tmp_path / "d"), "-n", "2", "--engine",
                          "reference", "--policies", f"{spec},heuristic,heuristic", "-q")  # fmt: skip
    assert code == 0, out + err
    assert marker.exists()


# ---------------------------------------------------------------------------------------------
# 8. DATA/play that is no folder of the store
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["file", "fifo", "symlink"])
def test_a_play_folder_that_is_no_folder_is_refused_bug(tmp_path: Path, kind: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    play = data / "play"
    if kind == "file":
        play.write_text("my notes")
    elif kind == "fifo":
        os.mkfifo(play)
    else:
        play.symlink_to(elsewhere, target_is_directory=True)
    for extra in ((), ("--resume",)):
        code, out, err = _cli("play", "--data", str(data), "--seed", "3", "--compare", "none",
                              "--no-review", *extra, stdin=MOVES)  # fmt: skip
        line = _one_error(code, out, err)
        assert "play" in line and ("symbolic link" in line or "not" in line), line
    assert list(elsewhere.iterdir()) == []  # nothing written outside the store
    if kind == "file":
        assert play.read_text() == "my notes"


# ---------------------------------------------------------------------------------------------
# --resume TABLE, broken tables skipped, --discard, doctor
# ---------------------------------------------------------------------------------------------


def test_resume_names_a_table_and_skips_broken_ones_bug(tmp_path: Path) -> None:
    # a broken newest table blocked --resume of every other; no option picked a table
    data = tmp_path / "data"
    older = _cut(data, "--seed", "21")
    other = _cut(data, "--seed", "22")
    broken = data / "play" / "29991231T235959-zed-0.jsonl"
    broken.write_text("not json\n")
    code, out, err = _cli("play", "--data", str(data), "--resume", older.stem, "--compare",
                          "none", "--no-review", stdin=MOVES)  # fmt: skip
    assert code == 0, out + err
    assert f"resuming table {older.stem}" in out
    assert not older.exists() and other.exists() and broken.exists()
    code, out, err = _cli("play", "--data", str(data), "--resume", "--compare", "none",
                          "--no-review", stdin=MOVES)  # fmt: skip
    assert code == 0, out + err
    assert f"resuming table {other.stem}" in out
    assert broken.stem in err and "skipped" in err, err
    assert broken.read_text() == "not json\n"  # kept: never deleted unless named
    code, out, err = _cli("play", "--data", str(data), "--resume", stdin=MOVES)
    line = _one_error(code, out, err)
    assert "no unfinished hand" in line and broken.stem in line, line
    line = _one_error(*_cli("play", "--data", str(data), "--resume", "nosuch", stdin=MOVES))
    assert "nosuch" in line
    line = _one_error(*_cli("play", "--data", str(data), "--resume", broken.stem, stdin=MOVES))
    assert broken.stem in line and "not a table" in line


def test_a_table_can_be_discarded_by_name_bug(tmp_path: Path) -> None:
    data = tmp_path / "data"
    sound = _cut(data, "--seed", "21")
    broken = data / "play" / "29991231T235959-zed-0.jsonl"
    broken.write_text("not json\n")
    code, out, err = _cli("play", "--data", str(data), "--discard", broken.stem)
    assert code == 0, out + err
    assert not broken.exists() and sound.exists()
    assert f"discarded table {broken.stem}" in out
    line = _one_error(*_cli("play", "--data", str(data), "--discard", "../runs"))
    assert "../runs" in line
    line = _one_error(*_cli("play", "--data", str(data), "--discard", "nosuch"))
    assert "nosuch" in line
    assert sound.exists()


def test_doctor_lists_the_play_folder_bug(tmp_path: Path) -> None:
    from leftover_helpers import small_store

    data = small_store(tmp_path / "store", "r")
    sound = _cut(data, "--seed", "21", "--run", "p")
    broken = data / "play" / "29991231T235959-zed-0.jsonl"
    broken.write_text("not json\n")
    (data / "play" / "notes.txt").write_text("mine")
    (tmp_path / "elsewhere").mkdir()
    (data / "play" / "link.jsonl").symlink_to(tmp_path / "elsewhere")
    res = CliRunner().invoke(main, ["doctor", "--data", str(data)])
    assert res.exit_code == 1, res.output
    assert sound.stem in res.stderr and "unfinished" in res.stderr, res.stderr
    listed = res.stdout
    assert f"play/{broken.name}" in listed and "not a table" in listed, listed
    assert "play/notes.txt" in listed and "play/link.jsonl" in listed, listed
    assert sound.name not in listed
    res = CliRunner().invoke(main, ["doctor", "--data", str(data), "--fix"])
    assert res.exit_code == 1, res.output  # the broken table and the notes are kept
    assert broken.exists() and (data / "play" / "notes.txt").exists() and sound.exists()
    assert not os.path.lexists(data / "play" / "link.jsonl")
    assert (tmp_path / "elsewhere").is_dir()
    res = CliRunner().invoke(
        main, ["doctor", "--data", str(data), "--fix", "--yes", f"play/{broken.name}"]
    )
    assert not broken.exists() and sound.exists() and (data / "play" / "notes.txt").exists()


def test_doctor_of_a_store_whose_play_is_a_symlink_bug(tmp_path: Path) -> None:
    from leftover_helpers import small_store

    data = small_store(tmp_path / "store", "r")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.jsonl").write_text("theirs")
    (data / "play").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    res = CliRunner().invoke(main, ["doctor", "--data", str(data)])
    assert res.exit_code == 1 and "play" in res.stdout and "link" in res.stdout, res.output
    res = CliRunner().invoke(main, ["doctor", "--data", str(data), "--fix"])
    assert not os.path.lexists(data / "play")
    assert (tmp_path / "elsewhere" / "x.jsonl").read_text() == "theirs"


# ---------------------------------------------------------------------------------------------
# Small ones: an empty runs folder is no store; --seed 0 … 2**64-1
# ---------------------------------------------------------------------------------------------


def test_an_empty_runs_folder_makes_no_store_bug(tmp_path: Path) -> None:
    from leftover_helpers import dead_pid

    home = tmp_path / "h"
    (home / "runs").mkdir(parents=True)
    tmp = home / f".write-test-{dead_pid()}"
    tmp.write_text("someone's file")
    line = _one_error(*_cli("doctor", "--data", str(home), "--fix"))
    assert "is not a paohuzi store" in line
    assert tmp.exists()


@pytest.mark.parametrize("seed", ["-1", str(2**64), str(2**70)])
def test_play_seed_out_of_range_is_refused_bug(tmp_path: Path, seed: str) -> None:
    data = tmp_path / "data"
    line = _one_error(*_cli("play", "--data", str(data), "--seed", seed, stdin=MOVES))
    assert "--seed" in line and seed in line, line
    assert not data.exists()


def test_new_deal_refuses_a_seed_out_of_range_bug() -> None:
    from engine.errors import InvalidNotation
    from replay.play.table import new_deal

    for seed in (-1, 2**64):
        with pytest.raises(InvalidNotation, match="seed"):
            new_deal("hunan", (), 0, "heuristic", seed, False, "play", "ann")


# ---------------------------------------------------------------------------------------------
# 5. The deal of the day: the store's secret, a commitment before, the seed after
# ---------------------------------------------------------------------------------------------


def _daily_header(path: Path) -> dict:
    return json.loads(path.read_text().splitlines()[0])


def _daily(root: Path) -> int:
    """The seed of the deal of the day of the store ``root``, as play deals it (the deal's
    outcome aside: a random secret's deal may end at the deal)."""
    from replay.play.table import Journal, new_deal

    deal = new_deal("hunan", (), 0, "heuristic", None, True, "play", "ann", root)
    journal = Journal.create(root, deal)
    assert journal.deal.seed == deal.seed
    return int(_daily_header(journal.path)["seed"])


def test_the_deal_of_the_day_comes_from_the_store_s_secret_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the seed followed from the date alone: anyone could look the deal up
    from replay.play import table

    monkeypatch.setattr(table, "today", lambda: DAY)
    a1, a2, b = _daily(tmp_path / "a"), _daily(tmp_path / "a"), _daily(tmp_path / "b")
    assert a1 == a2  # one store, one date: one deal
    assert a1 != b  # another store's secret: another deal
    secret = tmp_path / "a" / ".daily-secret"
    assert stat.S_IMODE(os.lstat(secret).st_mode) == 0o600
    assert a1 == table.daily_seed(tmp_path / "a", DAY)
    monkeypatch.setattr(table, "today", lambda: DAY + dt.timedelta(days=1))
    assert _daily(tmp_path / "a") != a1
    # the Play page's call (no store given): the deal is dealt by Journal.create alike
    monkeypatch.setattr(table, "today", lambda: DAY)
    deal = table.new_deal("hunan", (), 0, "heuristic", None, True, "play", "ann")
    assert table.Journal.create(tmp_path / "a", deal).deal.seed == a1


def test_the_daily_seed_is_committed_before_and_revealed_after_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # play printed the seed before the hand (demo --seed then showed every hidden hand)
    from replay.play import table

    monkeypatch.setattr(table, "today", lambda: DAY)
    data = tmp_path / "data"
    data.mkdir()
    (data / ".daily-secret").write_text("5a" * 32 + "\n")  # a known deal: not over at once
    code, before, err = _cli("play", "--data", str(data), "--daily", "--name", "ann",
                             "--compare", "none", "--no-review", stdin="1\n" * 2)  # fmt: skip
    assert code == 130, before + err
    (path,) = (data / "play").glob("*.jsonl")
    seed = _daily_header(path)["seed"]
    assert stat.S_IMODE(os.lstat(path).st_mode) & 0o077 == 0  # the seed's file is the player's
    assert str(seed) not in before + err
    line = next(x for x in before.splitlines() if "deal of the day 2026-12-05, commitment " in x)
    commitment = line.split("commitment ", 1)[1].split()[0]
    assert len(commitment) == 64 and str(seed) not in commitment
    code, after, err = _cli("play", "--data", str(data), "--resume", "--compare", "none",
                            "--no-review", stdin=MOVES)  # fmt: skip
    assert code == 0, after + err
    assert commitment in after
    assert after.rindex("your move>") < after.index(f"seed {seed}")  # once the hand is over
    # the documented check: printf 'paohuzi daily %s %s' DATE SEED | sha256sum
    text = f"paohuzi daily 2026-12-05 {seed}"
    assert hashlib.sha256(text.encode()).hexdigest() == commitment
    assert table.commitment(DAY, seed) == commitment


def test_daily_results_need_no_secret_and_make_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replay.play import table

    monkeypatch.setattr(table, "today", lambda: DAY)
    data = tmp_path / "data"
    data.mkdir()
    code, out, _ = _cli("play", "--data", str(data), "--daily", "--results")
    assert code == 0 and out.startswith("no hand of the deal of 2026-12-05"), out
    assert not (data / ".daily-secret").exists()


def test_doctor_knows_the_names_play_writes() -> None:
    # replay.store.leftovers is below replay.play: its copies of play's names held equal
    from replay.play import table
    from replay.store import leftovers

    assert leftovers.DAILY_SECRET_NAME == table.DAILY_SECRET_NAME
    assert leftovers.ROOT_TEMP_RE.fullmatch(f"{table.DAILY_SECRET_NAME}.tmp-123")
    assert leftovers.PLAY_TABLE_RE.fullmatch("20261207T185737-a.b_c-D-999.jsonl")


@pytest.mark.parametrize("kind", ["symlink", "fifo", "garbage"])
def test_a_daily_secret_that_is_no_secret_is_one_line_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    from replay.play import table

    monkeypatch.setattr(table, "today", lambda: DAY)
    data = tmp_path / "data"
    data.mkdir()
    secret = data / ".daily-secret"
    if kind == "symlink":
        (tmp_path / "theirs").write_text("ab" * 32 + "\n")
        secret.symlink_to(tmp_path / "theirs")
    elif kind == "fifo":
        os.mkfifo(secret)
    else:
        secret.write_text("not hex\n")
    line = _one_error(*_cli("play", "--data", str(data), "--daily", stdin=MOVES))
    assert ".daily-secret" in line, line
    assert not (data / "play").exists()
    if kind == "garbage":
        assert secret.read_text() == "not hex\n"  # never replaced: the past deals came from it
