"""A replay file is read by one strict schema (issue 20, item 3): a JSON value is of its type
(no seat "0", no true for a seat, no 2.0 for a card, no "false" for a flag, no unknown field),
the JSON is nested at most 200 deep with no NaN and no lone surrogate, and the file is a
regular file or a stream (a pipe, /dev/stdin), never a directory or a socket. Each refusal is
one ``Error:`` line naming the file and the field, exit status 2, through ``paohuzi replay
--file`` and ``paohuzi import``; and nothing is written."""

from __future__ import annotations

import json
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.cards import parse_cards
from engine.rules import PRESETS
from paohuzi.cli.main import main
from replay.record import runner
from replay.record.spec import RunSpec
from replay.replayer import replay_file
from replay.replayer.hand import load_hand
from replay.replayer.replay_file import ReplayFileError, read_replay
from replay.store.runs import open_store

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "honghu-zimo.phz"
TEXT = EXAMPLE.read_text(encoding="utf-8")
BASE: dict[str, Any] = json.loads(replay_file.to_json(replay_file.read_replay_file(EXAMPLE).log))


def edited(**fields: Any) -> dict[str, Any]:
    """BASE with top-level ``fields`` replaced; ``event0_KEY=v`` sets a key of event 0."""
    obj = json.loads(json.dumps(BASE))
    for k, v in fields.items():
        if k.startswith("event0_"):
            obj["events"][0][k.removeprefix("event0_")] = v
        else:
            obj[k] = v
    return obj


def refused_by_both(path: Path, message: str, tmp_path: Path) -> None:
    """``replay --file`` and ``import`` print exactly ``Error: PATH: MESSAGE``, exit 2, and
    import writes nothing."""
    data = tmp_path / "store"
    for args in (["replay", "--file", str(path)], ["import", str(path), "--data", str(data)]):
        res = CliRunner().invoke(main, args)
        assert (res.exit_code, res.stdout, res.stderr) == (2, "", f"Error: {path}: {message}\n")
    assert not data.exists()


def write(tmp_path: Path, text: str, name: str = "bad.json") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_json_seat_as_a_digit_string_bug(tmp_path: Path) -> None:
    # "seat": "0" was read as seat 0 and imported; a JSON seat is a JSON integer now (the
    # text spelling's digits are made integers by its parser, the one place text becomes
    # numbers).
    p = write(tmp_path, json.dumps(edited(event0_seat="0"), ensure_ascii=False))
    refused_by_both(p, "field events[0].seat: expected an integer in 0 … 3, got '0'", tmp_path)
    p = write(tmp_path, json.dumps(edited(dealer="0"), ensure_ascii=False))
    refused_by_both(p, "field dealer: expected an integer in 0 … 3, got '0'", tmp_path)


def test_json_true_as_a_seat_bug(tmp_path: Path) -> None:
    p = write(tmp_path, json.dumps(edited(event0_seat=True), ensure_ascii=False))
    refused_by_both(p, "field events[0].seat: expected an integer in 0 … 3, got True", tmp_path)


def test_json_float_as_a_card_bug(tmp_path: Path) -> None:
    deck: list[Any] = parse_cards(BASE["deck"])
    deck[5] = 2.0
    p = write(tmp_path, json.dumps(edited(deck=deck), ensure_ascii=False))
    refused_by_both(p, "field deck[5]: expected an integer in 0 … 19, got 2.0", tmp_path)
    outcome = {**BASE["outcome"], "hu_card": 2.0}
    p = write(tmp_path, json.dumps(edited(outcome=outcome), ensure_ascii=False))
    message = "field outcome.hu_card: expected a string, an integer or null, got 2.0"
    refused_by_both(p, message, tmp_path)


def test_json_false_as_a_string_bug(tmp_path: Path) -> None:
    p = write(tmp_path, json.dumps(edited(event0_forced="false"), ensure_ascii=False))
    message = "field events[0].forced: expected true, false or null, got 'false'"
    refused_by_both(p, message, tmp_path)


def test_json_nested_100000_deep_bug(tmp_path: Path) -> None:
    p = write(tmp_path, '{"title": ' + "[" * 100_000 + "]" * 100_000 + "}")
    message = "bad JSON at line 1 column 211: nested too deeply (more than 200 levels)"
    refused_by_both(p, message, tmp_path)


def test_json_lone_surrogate_bug(tmp_path: Path) -> None:
    # A title "\ud800" was read; import then wrote the shard files and died on the manifest
    # with a UnicodeEncodeError traceback, leaving a run folder with no manifest.
    text = json.dumps(edited(title="\ud800"))  # ASCII: the surrogate as an escape
    column = text.index("\\ud800") + 1
    p = write(tmp_path, text)
    message = (
        f"bad JSON at line 1 column {column}: a lone surrogate \\ud800 (half of a UTF-16 pair)"
    )
    refused_by_both(p, message, tmp_path)
    # The same through the Python API, the surrogate itself in the text.
    with pytest.raises(ReplayFileError) as e:
        read_replay(json.dumps(edited(title="\ud800"), ensure_ascii=False), "f.json")
    assert str(e.value) == "f.json: not UTF-8 text (a lone surrogate)"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_json_nan_bug(tmp_path: Path, token: str) -> None:
    # json.loads took NaN (then "dealer: expected an integer, not nan").
    text = json.dumps(BASE, ensure_ascii=False).replace('"dealer": 0', f'"dealer": {token}')
    column = text.index(token) + 1
    p = write(tmp_path, text)
    message = f"bad JSON at line 1 column {column}: NaN and Infinity are not JSON numbers"
    refused_by_both(p, message, tmp_path)


def test_json_unknown_field_bug(tmp_path: Path) -> None:
    # A misspelt field was ignored: "dealr": 1 imported the hand with dealer 0.
    p = write(tmp_path, json.dumps(edited(dealr=1), ensure_ascii=False))
    message = (
        "unknown field dealr (known: format, version, title, source, rules, dealer, deck, deal,"
        " record, policies, events, outcome)"
    )
    refused_by_both(p, message, tmp_path)


def test_text_spelling_numbers_bug(tmp_path: Path) -> None:
    # The text spelling's numbers are made integers by its parser and checked by the same
    # schema, the line named.
    p = write(tmp_path, TEXT.replace("dealer: 0", "dealer: 0\nrecord: session=1.5"), "bad.phz")
    message = "line 14: field record.session: expected an integer in 0 … 4294967295, got '1.5'"
    refused_by_both(p, message, tmp_path)
    p = write(tmp_path, TEXT.replace("1 seat 2: 碰", "1 seat 7: 碰"), "bad.phz")
    refused_by_both(
        p, "line 27: field events[1].seat: expected an integer in 0 … 3, got 7", tmp_path
    )


def test_byte_order_mark_bug(tmp_path: Path) -> None:
    # A JSON file saved with a byte-order mark was read as the text spelling ("line 1:
    # expected a section such as [hand]").
    for text in (json.dumps(BASE, ensure_ascii=False), TEXT):
        p = write(tmp_path, "\ufeff" + text, "bom.json")
        data = tmp_path / f"store-{len(text)}"
        res = CliRunner().invoke(main, ["import", str(p), "--data", str(data)])
        assert (res.exit_code, res.stdout) == (0, f"imported {p} as run imported-hunan hand 0\n")


def test_a_directory_bug(tmp_path: Path) -> None:
    d = tmp_path / "hands.json"
    d.mkdir()
    res = CliRunner().invoke(main, ["import", str(d), "--data", str(tmp_path / "store")])
    assert (res.exit_code, res.stderr) == (2, f"Error: {d} is a directory, not a replay file\n")


def test_a_socket_bug(tmp_path: Path) -> None:
    # open() of a socket said "cannot read …: No such device or address".
    path = tmp_path / "s.json"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        for args in (["replay", "--file", str(path)], ["import", str(path)]):
            res = CliRunner().invoke(main, [*args, "--data", str(tmp_path / "store")])
            assert (res.exit_code, res.stderr) == (
                2,
                f"Error: {path} is a socket, not a replay file\n",
            )


def _a_block_device() -> Path | None:
    for p in sorted(Path("/dev").iterdir()):
        try:
            if stat.S_ISBLK(p.stat().st_mode):
                return p
        except OSError:
            continue
    return None


@pytest.mark.skipif(_a_block_device() is None, reason="no block device in /dev")
def test_a_block_device_bug(tmp_path: Path) -> None:
    dev = _a_block_device()
    res = CliRunner().invoke(main, ["import", str(dev), "--data", str(tmp_path / "store")])
    assert (res.exit_code, res.stderr) == (
        2,
        f"Error: {dev} is a block device, not a replay file\n",
    )


def test_standard_input_is_still_read_bug(tmp_path: Path) -> None:
    # A pipe stays a replay file: the file-kind check lets FIFOs and /dev/stdin through.
    for args in (["replay", "--file", "/dev/stdin", "--no-color"],
                 ["import", "/dev/stdin", "--data", str(tmp_path / "store")]):  # fmt: skip
        res = subprocess.run(
            [sys.executable, "-m", "paohuzi.cli", *args],
            input=json.dumps(BASE, ensure_ascii=False),
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
        )
        assert res.returncode == 0, res.stderr
    assert res.stdout == "imported /dev/stdin as run imported-hunan hand 0\n"


@pytest.fixture(scope="module")
def every_preset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("presets")
    for name, rules in PRESETS.items():
        spec = RunSpec(rules=rules, policies=("random",) * rules.players, seed=4, deals=3,
                       session_length=3, shard_hands=3)  # fmt: skip
        runner.simulate(spec, d, name)
    return d


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_export_still_reads_back_strictly_bug(
    every_preset: Path, tmp_path: Path, preset: str, fmt: str
) -> None:
    # What export writes passes the strict schema, for every preset and both spellings, and
    # imports as the same hand.
    root = tmp_path / "store"
    shutil.copytree(every_preset, root)
    for hand in range(3):
        p = tmp_path / f"h{hand}.{'json' if fmt == 'json' else 'phz'}"
        res = CliRunner().invoke(
            main, ["export", preset, str(hand), "-o", str(p), "--data", str(root)]
        )
        assert res.exit_code == 0, res.output
        assert CliRunner().invoke(main, ["replay", "--file", str(p)]).exit_code == 0
        res = CliRunner().invoke(main, ["import", str(p), "--run", "back", "--data", str(root)])
        assert res.exit_code == 0, res.output
        a, b = load_hand(root, preset, hand), load_hand(root, "back", hand)
        assert (a.deck, a.dealer, a.events, a.rules) == (b.deck, b.dealer, b.events, b.rules)
    assert open_store(root).run("back").n_hands == 3
