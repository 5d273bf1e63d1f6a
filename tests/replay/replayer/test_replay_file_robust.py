"""Replay files that are wrong in any way give one ReplayFileError (one line) and never another
exception: every field of the documented format with a wrong type, out-of-range numbers,
deep nesting, and random bytes and mutations (hypothesis). Also the card parser and the
``score --batch`` line parser."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cards import parse_cards
from engine.errors import PaohuziError
from replay import calculator
from replay.cli.main import main
from replay.replayer import exchange
from replay.replayer.exchange import ReplayFileError, read_replay

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "honghu-zimo.phz"
TEXT = EXAMPLE.read_text(encoding="utf-8")
BASE: dict[str, Any] = json.loads(exchange.to_json(exchange.read_replay_file(EXAMPLE).log))
FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def with_field(path: str, value: Any) -> dict[str, Any]:
    """BASE with the field at ``a.b.c`` (list indices as digits) replaced."""
    obj = json.loads(json.dumps(BASE))
    *head, last = path.split(".")
    cur: Any = obj
    for k in head:
        if isinstance(cur, list):
            cur = cur[int(k)]
        else:
            if cur.get(k) is None:
                cur[k] = {}
            cur = cur[k]
    if isinstance(cur, list):
        cur[int(last)] = value
    else:
        cur[last] = value
    return obj


def one_error(text: str) -> str:
    """The message of the ReplayFileError reading (and checking) ``text`` raises."""
    with pytest.raises(ReplayFileError) as e:
        exchange.check_replay(read_replay(text, "f.json"))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("f.json: "), msg
    return msg


def test_the_base_object_reads() -> None:
    rf = read_replay(json.dumps(BASE), "f.json")
    exchange.check_replay(rf)


WRONG_TYPES = [
    ("outcome", 5, "outcome: expected an object"),
    ("policies", 5, "policies: expected a list"),
    ("record", "x", "record: expected an object"),
    ("record.session", -1, "record field session: -1 is out of range"),
    ("record.rotation", 256, "record field rotation: 256 is out of range"),
    ("record.session", "1.5", "record field session: expected an integer"),
    ("record.session", True, "record field session: expected an integer"),
    ("record.deal_id", [1], "record field deal_id: expected an integer"),
    ("format", 5, "format 5 is not"),
    ("version", [1], "version: expected an integer"),
    ("version", 1.0, "version: expected an integer"),
    ("title", 5, "title: expected a string"),
    ("source", 5, "source: expected a string or an object"),
    ("rules", 5, "rules: expected a preset name or an object"),
    ("rules", [], "rules: expected a preset name or an object"),
    ("rules.full", "x", "rules.full: expected an object"),
    ("rules.full.players", "3", "rule players='3': expected int"),
    ("rules.full.min_huxi", None, "rule min_huxi=None"),
    ("dealer", "x", "dealer: expected an integer"),
    ("dealer", None, "dealer: expected an integer"),
    ("dealer", 10**30, "is not a seat of a 3-player table"),
    ("deck", 5, "deck: expected cards"),
    ("deck", {"a": 1}, "deck: expected cards"),
    ("deck", [0] * 79 + ["x"], "deck[79]: expected an integer"),
    ("deck", [99] * 80, "deck[0]: 99 is out of range"),
    ("events", 5, "events: expected a list"),
    ("events", {"seat": 0}, "events: expected a list"),
    ("events.0", 5, "event 0: expected an object or a 'seat S: ACTION' string"),
    ("events.0", None, "event 0: expected an object"),
    ("events.0.seat", "x", "event 0: seat: expected an integer"),
    ("events.0.seat", -1, "event 0: seat: -1 is out of range"),
    ("events.0.seat", [0], "event 0: seat: expected an integer"),
    ("events.0.action", 13, "event 0: action: expected a string"),
    ("events.0.action", None, "event 0: action: expected a string"),
    ("events.0.seq", "x", "event 0: seq: expected an integer"),
    ("events.0.code", [1], "event 0: code: expected an integer"),
    ("events.0.forced", "yes", "event 0: forced: expected true or false"),
    ("events.0.options", 5, "event 0: options: expected a list"),
    ("outcome.result", [], "outcome.result: expected a string or a number"),
    ("outcome.result", 99, "outcome.result: 99 is out of range"),
    ("outcome.winner", {}, "outcome.winner: expected a string or a number"),
    ("outcome.winner", "one", "outcome.winner: expected an integer"),
    ("outcome.huxi", 1.5, "outcome.huxi: expected a string or a number"),
    ("outcome.hu_card", 99, "outcome.hu_card: 99 is out of range"),
    ("outcome.source", True, "outcome.source: expected a string or a number"),
    ("outcome.mingtang", [1], "outcome.mingtang: expected a string or a number"),
    ("outcome.zimo", 3, "outcome.zimo: expected yes/no"),
    ("outcome.deltas", 5, "outcome.deltas: expected a list or a string"),
    ("outcome.deltas", [1, "x", 2], "outcome.deltas[1]: expected an integer"),
    ("outcome.stock_left", None, "stock_left None (replay gives"),  # null: none left
    ("outcome.fan", "3", "fan 3 (replay gives"),  # a number as a string
]


@pytest.mark.parametrize("path, value, message", WRONG_TYPES, ids=[w[0] for w in WRONG_TYPES])
def test_wrong_types_are_one_line_errors(path: str, value: Any, message: str | None) -> None:
    text = json.dumps(with_field(path, value), ensure_ascii=False)
    if message is None:
        exchange.check_replay(read_replay(text, "f.json"))
        return
    assert message in one_error(text)


@pytest.mark.parametrize(
    "obj, message",
    [
        ({**BASE, "deck": None, "deal": 5}, "deal: expected an object"),
        ({**BASE, "deck": None, "deal": {"hands": [1]}}, "deal.hands: expected an object"),
        ({**BASE, "deck": None, "deal": {"hands": {"0": 5}}}, "deal.hands.0: expected a string"),
        (
            {
                **BASE,
                "deck": None,
                "deal": {"hands": {"0": "一", "1": "一", "2": "一"}, "liang": 5},
            },
            "deal.liang: expected a string",
        ),
        (
            {
                **BASE,
                "deck": None,
                "deal": {"hands": {"0": "一", "1": "一", "2": "一"}, "stock": []},
            },
            "deal.stock: expected a string",
        ),
        ({**BASE, "rules": {"preset": 5}}, "rules.preset: expected a string"),
        ({**BASE, "rules": {"preset": "hunan", "set": "x"}}, "rules.set: expected a list"),
        ({**BASE, "rules": {"preset": "hunan", "set": [5]}}, "rules.set: expected a string"),
        ({**BASE, "rules": {"preset": "hunan", "set": {"a": []}}}, "rules.set.a: expected"),
        ({**BASE, "policies": [5, "a", "b"]}, "policies: expected a string"),
        ({**BASE, "outcome": {"nope": 1}}, "unknown outcome field 'nope'"),
        ({**BASE, "record": {"nope": 1}}, "unknown record field 'nope'"),
    ],
)
def test_wrong_nested_types(obj: dict[str, Any], message: str) -> None:
    assert message in one_error(json.dumps(obj, ensure_ascii=False))


def test_text_spelling_negative_record_and_bad_numbers() -> None:
    text = TEXT.replace("dealer: 0", "dealer: 0\nrecord: session=-1")
    assert "record field session: -1 is out of range" in one_error(text)
    text = TEXT.replace("dealer: 0", "dealer: 0\nrecord: session=" + "9" * 5000)
    assert "record field session: expected an integer" in one_error(text)
    text = TEXT.replace("1 seat 2: 碰", "1 seat " + "9" * 5000 + ": 碰")
    assert "seat: expected an integer" in one_error(text)


@pytest.mark.parametrize("depth", [100, 10_000, 200_000])
def test_deep_nesting_is_one_error(depth: int) -> None:
    for inner in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        msg = one_error(json.dumps(BASE).rstrip()[:-1] + ', "outcome": ' + inner + "}")
        assert "nested too deeply" in msg or "expected" in msg or "unknown" in msg


def test_huge_json_integer_is_one_error() -> None:
    assert "bad JSON" in one_error('{"dealer": ' + "9" * 5000 + "}")


def test_a_long_value_is_cut_in_the_message() -> None:
    msg = one_error(json.dumps({**BASE, "title": ["x" * 100_000]}))
    assert len(msg) < 300


# ---------------------------------------------------------------------------------------------
# Fuzz: one ReplayFileError or success, never another exception
# ---------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=True)
    | st.text(max_size=20),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = [
    "format", "version", "title", "source", "rules", "dealer", "deck", "deal", "record",
    "policies", "events", "outcome",
]  # fmt: skip


def read_or_error(text: str) -> None:
    try:
        rf = read_replay(text, "fuzz")
        exchange.check_replay(rf)
    except ReplayFileError as e:
        assert "\n" not in str(e)


@FAST
@given(st.sampled_from(FIELDS), json_values)
def test_fuzz_json_field_values(field: str, value: Any) -> None:
    read_or_error(json.dumps({**BASE, field: value}))


@FAST
@given(
    st.sampled_from(FIELDS + ["events.0", "events.3", "outcome.deltas", "record.session"]),
    st.sampled_from(["seat", "action", "seq", "code", "forced", "result", "winner", "x"]),
    json_values,
)
def test_fuzz_nested_values(path: str, key: str, value: Any) -> None:
    obj = with_field(path, {key: value}) if "." not in path else with_field(path, value)
    read_or_error(json.dumps(obj))


@FAST
@given(st.data())
def test_fuzz_text_mutations(data: st.DataObject) -> None:
    lines = TEXT.splitlines()
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        op = data.draw(st.sampled_from(["drop", "dup", "edit", "insert"]))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "edit" and lines[i]:
            j = data.draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:j] + data.draw(st.text(max_size=5)) + lines[i][j + 1 :]
        else:
            lines.insert(i, data.draw(st.text(max_size=40)))
        if not lines:
            lines = [""]
    read_or_error("\n".join(lines))


@FAST
@given(st.binary(max_size=300))
def test_fuzz_random_bytes_from_disk(tmp_path_factory: pytest.TempPathFactory, blob: bytes) -> None:
    p = tmp_path_factory.mktemp("fuzz") / "f.phz"
    p.write_bytes(blob)
    try:
        exchange.check_replay(exchange.read_replay_file(p))
    except ReplayFileError as e:
        assert "\n" not in str(e)


@FAST
@given(st.text(max_size=40))
def test_fuzz_parse_cards(text: str) -> None:
    try:
        cards = parse_cards(text)
    except PaohuziError as e:
        assert "\n" not in str(e) or "\n" in text
    else:
        assert all(0 <= k < 20 for k in cards)


batch_objects = st.dictionaries(
    st.sampled_from(
        [
            "hand",
            "melds",
            "card",
            "source",
            "rules",
            "set",
            "haidi",
            "dihu",
            "tianhu",
            "id",
            "other",
        ]
    ),  # fmt: skip
    json_values | st.sampled_from(["壹贰叁柒捌玖六七八九九", "pao:伍", "拾", "own", "luzhou"]),
    max_size=6,
)


@FAST
@given(st.one_of(batch_objects.map(json.dumps), st.text(max_size=60), json_values.map(json.dumps)))
def test_fuzz_batch_lines(line: str) -> None:
    line = line.replace("\n", " ").replace("\r", " ")
    out = io.BytesIO()
    calculator.run_batch([line.encode("utf-8", "surrogatepass")], out)
    answers = out.getvalue().decode().splitlines()
    assert len(answers) == 1  # a blank line too (issue 20, item 9)
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in line):  # the same line as str: same answers
        as_str = io.BytesIO()
        calculator.run_batch([line], as_str)
        assert as_str.getvalue() == out.getvalue()
    for a in answers:
        obj = json.loads(a)
        assert "internal error" not in str(obj.get("error", "")), (line, obj)


# ---------------------------------------------------------------------------------------------
# The command line: exactly one stderr line starting "Error:" and exit status 2
# ---------------------------------------------------------------------------------------------


def assert_one_error_line(res: Any) -> None:
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr


@FAST
@given(
    st.one_of(
        st.binary(max_size=200),
        st.sampled_from(FIELDS).flatmap(
            lambda f: json_values.map(lambda v: json.dumps({**BASE, f: v}).encode())
        ),
    ),
    st.sampled_from(["replay", "import"]),
)
def test_cli_bad_replay_files(
    tmp_path_factory: pytest.TempPathFactory, blob: bytes, cmd: str
) -> None:
    d = tmp_path_factory.mktemp("cli")
    p = d / "bad.phz"
    p.write_bytes(blob)
    args = ["replay", "--file", str(p)] if cmd == "replay" else ["import", str(p)]
    res = CliRunner().invoke(main, [*args, "--data", str(d / "store")])
    if res.exit_code == 0:  # a random edit that still makes a valid hand
        return
    assert_one_error_line(res)


@FAST
@given(st.text(min_size=1, max_size=30).filter(lambda s: "\n" not in s and "\r" not in s))
def test_cli_bad_card_strings(text: str) -> None:
    res = CliRunner().invoke(main, ["score", "--", text])
    if res.exit_code == 0:
        return
    assert_one_error_line(res)
    res = CliRunner().invoke(main, ["score", "壹贰叁柒捌玖六七八九九", "--card", text])
    if res.exit_code != 0:
        assert_one_error_line(res)


@FAST
@given(st.text(min_size=1, max_size=20).filter(lambda s: "\n" not in s and "\r" not in s))
def test_cli_bad_presets(text: str) -> None:
    res = CliRunner().invoke(main, ["demo", "--rules", text])
    if res.exit_code != 0:
        assert_one_error_line(res)


@pytest.mark.parametrize(
    "spec",
    [
        "os:path",
        "json:loads",
        "nosuch.module:X",
        "engine.policies:BUILTIN",
        "a:",
        ":b",
        "nope",
        ".relative:X",
        "engine.policies:Policy",
    ],  # fmt: skip
)
def test_cli_bad_policies(spec: str) -> None:
    assert_one_error_line(CliRunner().invoke(main, ["demo", "--policies", spec]))
