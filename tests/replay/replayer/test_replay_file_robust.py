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

from engine import calculator
from engine.cards import parse_cards
from engine.errors import PaohuziError
from paohuzi.cli.main import main
from replay.replayer import replay_file
from replay.replayer.replay_file import ReplayFileError, read_replay

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "honghu-zimo.phz"
TEXT = EXAMPLE.read_text(encoding="utf-8")
BASE: dict[str, Any] = json.loads(replay_file.to_json(replay_file.read_replay_file(EXAMPLE).log))
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
        replay_file.check_replay(read_replay(text, "f.json"))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("f.json: "), msg
    return msg


def test_the_base_object_reads() -> None:
    rf = read_replay(json.dumps(BASE), "f.json")
    replay_file.check_replay(rf)


I32 = "-2147483648 … 2147483647"
U32 = "0 … 4294967295"
CARDS_OR_NULL = "expected the cards (a string, or a list of card codes 0 … 19) or null"
ANY_VALUE = "expected a string, an integer or null"
#: (field, value, the whole message after "f.json: "): the schema's one line, naming the field
#: (issue 20, item 3: a JSON value is of its type, no "1.5", no true for an integer)
WRONG_TYPES = [
    ("outcome", 5, "field outcome: expected an object or null, got 5"),
    ("policies", 5, "field policies: expected a list or null, got 5"),
    ("record", "x", "field record: expected an object or null, got 'x'"),
    ("record.session", -1, f"field record.session: expected an integer in {U32}, got -1"),
    ("record.rotation", 256, "field record.rotation: expected an integer in 0 … 255, got 256"),
    ("record.session", "1.5", f"field record.session: expected an integer in {U32}, got '1.5'"),
    ("record.session", True, f"field record.session: expected an integer in {U32}, got True"),
    ("record.deal_id", [1], f"field record.deal_id: expected an integer in {U32}, got [1]"),
    ("format", 5, "field format: expected 'paohuzi-replay', got 5"),
    ("version", [1], f"field version: expected an integer in {U32}, got [1]"),
    ("version", 1.0, f"field version: expected an integer in {U32}, got 1.0"),
    ("title", 5, "field title: expected a string or null, got 5"),
    ("source", 5, "field source: expected a string, an object or null, got 5"),
    ("rules", 5, "field rules: expected a preset name or an object, got 5"),
    ("rules", [], "field rules: expected a preset name or an object, got []"),
    ("rules.full", "x", "field rules.full: expected an object or null, got 'x'"),
    ("rules.full.players", "3", "field rules.full.players: expected an integer, got '3'"),
    ("rules.full.min_huxi", None, "field rules.full.min_huxi: expected an integer, got None"),
    ("rules.full.min_huxi", 0, "rule min_huxi=0: expected 1..99"),
    ("dealer", "x", "field dealer: expected an integer in 0 … 3, got 'x'"),
    ("dealer", None, "field dealer: expected an integer in 0 … 3, got None"),
    ("dealer", 10**30, f"field dealer: expected an integer in 0 … 3, got {10**30}"),
    ("dealer", 3, "dealer 3 is not a seat of a 3-player table"),
    ("deck", 5, f"field deck: {CARDS_OR_NULL}, got 5"),
    ("deck", {"a": 1}, f"field deck: {CARDS_OR_NULL}, got {{'a': 1}}"),
    ("deck", [0] * 79 + ["x"], "field deck[79]: expected an integer in 0 … 19, got 'x'"),
    ("deck", [99] * 80, "field deck[0]: expected an integer in 0 … 19, got 99"),
    ("events", 5, "field events: expected a list or null, got 5"),
    ("events", {"seat": 0}, "field events: expected a list or null, got {'seat': 0}"),
    ("events.0", 5, "field events[0]: expected an object or a 'seat S: ACTION' string, got 5"),
    (
        "events.0",
        None,
        "field events[0]: expected an object or a 'seat S: ACTION' string, got None",
    ),
    ("events.0.seat", "x", "field events[0].seat: expected an integer in 0 … 3, got 'x'"),
    ("events.0.seat", -1, "field events[0].seat: expected an integer in 0 … 3, got -1"),
    ("events.0.seat", [0], "field events[0].seat: expected an integer in 0 … 3, got [0]"),
    ("events.0.seat", 3, "event 0: seat 3 is not a seat of this table"),
    ("events.0.action", 13, "field events[0].action: expected a string, got 13"),
    ("events.0.action", None, "field events[0].action: expected a string, got None"),
    ("events.0.seq", "x", "field events[0].seq: expected an integer or null, got 'x'"),
    ("events.0.seq", 1, "event 0: seq 1 out of order (expected 0)"),
    ("events.0.code", [1], "field events[0].code: expected an action code or null, got [1]"),
    ("events.0.forced", "yes", "field events[0].forced: expected true, false or null, got 'yes'"),
    ("events.0.options", 5, "field events[0].options: expected a list or null, got 5"),
    ("outcome.result", [], f"field outcome.result: {ANY_VALUE}, got []"),
    ("outcome.result", 99, "field outcome.result: expected an integer in 0 … 3, got 99"),
    ("outcome.winner", {}, f"field outcome.winner: {ANY_VALUE}, got {{}}"),
    (
        "outcome.winner",
        "one",
        "field outcome.winner: expected an integer in 0 … 3 or -, got 'one'",
    ),
    ("outcome.winner", "7", "field outcome.winner: expected an integer in 0 … 3, got 7"),
    ("outcome.huxi", 1.5, f"field outcome.huxi: {ANY_VALUE}, got 1.5"),
    ("outcome.hu_card", 99, "field outcome.hu_card: expected an integer in 0 … 19, got 99"),
    ("outcome.source", True, f"field outcome.source: {ANY_VALUE}, got True"),
    ("outcome.mingtang", [1], f"field outcome.mingtang: {ANY_VALUE}, got [1]"),
    ("outcome.zimo", 3, "field outcome.zimo: expected yes/no, true/false or null, got 3"),
    ("outcome.deltas", 5, "field outcome.deltas: expected a list of integers or a string, got 5"),
    (
        "outcome.deltas",
        [1, "x", 2],
        f"field outcome.deltas[1]: expected an integer in {I32}, got 'x'",
    ),
    ("outcome.stock_left", None, "the stated outcome differs: stock_left None (replay gives 16)"),
    ("outcome.fan", "3", "the stated outcome differs: fan 3 (replay gives 2)"),  # a number as text
]


@pytest.mark.parametrize("path, value, message", WRONG_TYPES, ids=[w[0] for w in WRONG_TYPES])
def test_wrong_types_are_one_line_errors(path: str, value: Any, message: str) -> None:
    text = json.dumps(with_field(path, value), ensure_ascii=False)
    assert one_error(text) == f"f.json: {message}"


HANDS = {"0": "一", "1": "一", "2": "一"}


@pytest.mark.parametrize(
    "obj, message",
    [
        ({**BASE, "deck": None, "deal": 5}, "field deal: expected an object or null, got 5"),
        (
            {**BASE, "deck": None, "deal": {"hands": [1]}},
            "field deal.hands: expected an object, got [1]",
        ),
        (
            {**BASE, "deck": None, "deal": {"hands": {"0": 5}}},
            "field deal.hands.0: expected a string, got 5",
        ),
        (
            {**BASE, "deck": None, "deal": {"hands": HANDS, "liang": 5}},
            "field deal.liang: expected a string or null, got 5",
        ),
        (
            {**BASE, "deck": None, "deal": {"hands": HANDS, "stock": []}},
            "field deal.stock: expected a string or null, got []",
        ),
        (
            {**BASE, "deck": None, "deal": {"hands": HANDS, "stok": "rest"}},
            "unknown field deal.stok (known: hands, liang, stock)",
        ),
        ({**BASE, "rules": {"preset": 5}}, "field rules.preset: expected a string or null, got 5"),
        (
            {**BASE, "rules": {"preset": "hunan", "set": "x"}},
            "field rules.set: expected a list of 'switch=value' strings, an object or null,"
            " got 'x'",
        ),
        (
            {**BASE, "rules": {"preset": "hunan", "set": [5]}},
            "field rules.set[0]: expected a string, got 5",
        ),
        (
            {**BASE, "rules": {"preset": "hunan", "set": {"a": []}}},
            "field rules.set.a: expected a string, an integer or true/false, got []",
        ),
        (
            {**BASE, "policies": [5, "a", "b"]},
            "field policies[0]: expected a string or null, got 5",
        ),
        (
            {**BASE, "outcome": {"nope": 1}},
            "unknown field outcome.nope (known: result, winner, source, hu_card, from_seat, huxi,"
            " deng, fan, score, mingtang, zimo, deltas, stock_left)",
        ),
        (
            {**BASE, "record": {"nope": 1}},
            "unknown field record.nope (known: session, session_hand, rotation, deal_id,"
            " huang_streak)",
        ),
        (
            {**BASE, "source": {"run": "r", "hand_id": "3"}},
            "field source.hand_id: expected an integer or null, got '3'",
        ),
        (
            {**BASE, "events": ["seat 9: 过", *BASE["events"][1:]]},
            "field events[0].seat: expected an integer in 0 … 3, got 9",
        ),
        (
            {**BASE, "events": ["sat 0: 过", *BASE["events"][1:]]},
            "field events[0]: expected 'seat S: ACTION', got 'sat 0: 过'",
        ),
    ],
)
def test_wrong_nested_types(obj: dict[str, Any], message: str) -> None:
    assert one_error(json.dumps(obj, ensure_ascii=False)) == f"f.json: {message}"


def test_text_spelling_negative_record_and_bad_numbers() -> None:
    # The text parser makes numbers of digits; the schema checks them, naming field and line.
    text = TEXT.replace("dealer: 0", "dealer: 0\nrecord: session=-1")
    assert one_error(text) == (
        "f.json: line 14: field record.session: expected an integer in 0 … 4294967295, got -1"
    )
    text = TEXT.replace("dealer: 0", "dealer: 0\nrecord: session=" + "9" * 5000)
    assert one_error(text) == (
        "f.json: line 14: field record.session: expected an integer in 0 … 4294967295,"
        " got '999999999999999999999999999999999999…"
    )
    text = TEXT.replace("1 seat 2: 碰", "1 seat " + "9" * 5000 + ": 碰")
    assert one_error(text) == (
        "f.json: line 27: field events[1].seat: expected an integer in 0 … 3,"
        " got '999999999999999999999999999999999999…"
    )
    text = TEXT.replace("dealer: 0", "dealer: 1.0")
    assert (
        one_error(text) == "f.json: line 13: field dealer: expected an integer in 0 … 3, got '1.0'"
    )
    text = TEXT.replace("zimo: yes", "zimo: maybe")
    assert one_error(text) == "f.json: line 49: field outcome.zimo: expected yes or no, got 'maybe'"


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
        replay_file.check_replay(rf)
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
        replay_file.check_replay(replay_file.read_replay_file(p))
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
