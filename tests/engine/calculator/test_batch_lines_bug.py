"""``score --batch`` answers every line, whatever it holds, on both engines, and its output is
always UTF-8 JSON lines (issue 20, item 9); ``score`` refuses more cards than a seat holds
(item 11). Each case once crashed the batch, lost answers or wrote output no JSON reader takes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import calculator
from engine.calculator import fast, protocol
from engine.cards import CARD_CHARS
from paohuzi.cli.main import main

ENGINES = ("fast", "reference")
GOOD = '{"hand": "壹贰叁柒捌玖六七八九九", "melds": ["pao:伍", "peng:三", "chi:二,七,十"]}'
GOOD_ROW = {"win": True, "huxi": 19, "reason": None, "deng": None, "fan": None, "score": None}
EX1 = ("壹贰叁四五六七八九陆柒捌贰柒", ["chi:一,二,三", "peng:伍"], "拾")  # RULES §15 Example 1


def batch(lines: list[Any], engine: str) -> tuple[list[dict[str, Any]], calculator.BatchStats]:
    """The rows ``run_batch`` writes for ``lines``, read as strict UTF-8 JSON."""
    buf = io.BytesIO()
    stats = calculator.run_batch(lines, buf, engine=engine)
    return [json.loads(row) for row in buf.getvalue().decode().splitlines()], stats


def one_row(line: Any) -> dict[str, Any]:
    """The answer to ``line`` between two good lines: the same on both engines, the good
    lines answered."""
    got = []
    for engine in ENGINES:
        rows, stats = batch([GOOD, line, GOOD], engine)
        assert len(rows) == 3 and stats.lines == 3, (engine, rows)
        assert rows[0] == rows[2] == GOOD_ROW, engine
        got.append(rows[1])
    assert got[0] == got[1]
    return got[0]


def error(line: Any) -> str:
    row = one_row(line)
    assert set(row) == {"line", "error"} and row["line"] == 2, row
    return str(row["error"])


def cli(*args: str, input: bytes | str | None = None) -> Any:
    return CliRunner().invoke(main, ["score", *args], input=input)


# --------------------------------------------------------------------------- item 9


@pytest.mark.parametrize(
    "line",
    [
        b'{"hand": "\\u4e00", "id": "\\ud800"}',
        '{"hand": "一", "id": "\ud800"}',  # a str line with the surrogate itself
        b'{"hand": "\\u4e00", "id": {"a": ["x", "\\ud800"]}}',
    ],
)
def test_lone_surrogate_in_the_id_is_one_error_line_bug(line: Any) -> None:
    # Encoding the echoed id raised UnicodeEncodeError: no output at all, for any line.
    assert error(line) == '"id" holds a lone surrogate (U+D800), which is no Unicode text'


def test_lone_surrogate_quoted_in_an_error_stays_valid_utf8_bug() -> None:
    # A message quoting a lone surrogate is written as the text \udc80, not the code point.
    msg = error(b'{"hand": "\\u4e00", "source": "\\udc80"}')
    assert msg.startswith("unknown source '\\udc80' (known: own,")
    msg = error(b'{"hand": "\\udc80\\u4e00"}')
    assert msg == "bad hand: unknown card '\\udc80' at position 0 in '\\udc80一'"


@pytest.mark.parametrize("value", ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "[NaN]"])
def test_id_nan_or_infinity_is_one_error_line_bug(value: str) -> None:
    # The id was echoed as NaN / Infinity, which no JSON reader takes.
    assert error(f'{{"hand": "一", "id": {value}}}') == (
        '"id" holds NaN or Infinity (1e400 reads as Infinity), which JSON cannot write'
    )


def test_number_over_the_int_limit_is_one_error_line_bug() -> None:
    # The message was Python's own: "... use sys.set_int_max_str_digits() to increase the limit".
    assert error('{"hand": "一", "id": ' + "7" * 5000 + "}") == (
        "bad JSON: a number of more than 4,300 digits"
    )
    assert one_row('{"hand": "一", "id": ' + "7" * 400 + "}")["id"] == int("7" * 400)


@pytest.mark.parametrize("line", ["", "   ", "\t\r\n", b"\r\n"])
def test_blank_line_is_answered_bug(line: Any) -> None:
    # A blank line got no output line: the answers no longer lined up with the input.
    assert error(line) == "blank line"


@pytest.mark.parametrize("value", ["3", "[1]", '"s"', "null", "true", "{}"])
def test_json_value_not_an_object_is_one_error_line(value: str) -> None:
    assert error(value) == ("expected a JSON object" if value != "{}" else 'missing "hand"')


def test_nul_bytes_and_bytes_not_utf8_are_error_lines_bug() -> None:
    # json's message said "Invalid control character at at column 11".
    assert error(b'{"hand": "\x00"}') == "bad JSON: Invalid control character at column 11"
    assert error(b"\x00\x00") == "bad JSON: Expecting value at column 1"
    assert error(b'{"hand": "\xed\xa0\x80"}') == "bad JSON: not UTF-8"  # a surrogate in UTF-8
    assert error(b"\xff\xfe{}") == "bad JSON: not UTF-8"


@pytest.mark.parametrize("line", ["\ufeff" + GOOD, ("\ufeff" + GOOD).encode()])
def test_byte_order_mark_is_skipped_bug(line: Any) -> None:
    # A line (the first of a file saved by Notepad) starting with a BOM was "bad JSON".
    assert one_row(line) == GOOD_ROW


def test_crlf_line_ends_are_read_as_lf(tmp_path: Path) -> None:
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(f"{GOOD}\r\n{{not json\r\n{GOOD}\r\n".encode())
    for engine in ENGINES:
        r = cli("--batch", str(path), "--engine", engine)
        assert r.exit_code == 0, r.output
        rows = [json.loads(x) for x in r.stdout.splitlines()]
        assert rows == [GOOD_ROW, {"line": 2, "error": "bad JSON: Expecting property name "
                                   "enclosed in double quotes at column 2"}, GOOD_ROW]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"hand": "一", "' + "k" * 3000 + '": 1}', "unknown key 'kkk"),
        ('{"hand": "一", "rules": "' + "x" * 3000 + '"}', "unknown rule preset 'xxx"),
        ('{"hand": "一", "set": ["' + "x" * 3000 + '=1"]}', "unknown rule switch 'xxx"),
        ('{"hand": "一", "set": ["huayang=' + "x" * 3000 + '"]}', "rule huayang='xxx"),
        ('{"hand": "一", "set": "' + "x" * 3000 + '"}', '"set" must be a list'),
        ('{"hand": "一", "set": [' + ",".join(["1"] * 3000) + "]}", '"set" must be a list of'),
        ('{"hand": "一", "source": "' + "x" * 3000 + '"}', "unknown source 'xxx"),
        ('{"hand": "一", "card": "' + "x" * 3000 + '"}', "unknown card 'xxx"),
        ('{"hand": "一", "card": [' + ",".join(["1"] * 3000) + "]}", "bad hu card [1, 1,"),
        ('{"hand": [' + ",".join(["1"] * 3000) + "]}", "bad hand [1, 1,"),
        ('{"hand": "一", "melds": "' + "x" * 3000 + '"}', '"melds" must be a list'),
        ('{"hand": "一", "melds": [[' + ",".join(["1"] * 3000) + "]]}", "malformed meld [1, 1,"),
        ('{"hand": "一", "haidi": "' + "x" * 3000 + '"}', '"haidi" must be a bool'),
        ('{"hand": "' + "一" * 3000 + '"}', "3000 copies of 一 across hand '一一一"),
    ],
)
def test_error_lines_quote_a_short_prefix_of_the_input_bug(line: str, needle: str) -> None:
    # Each of these echoed the whole 3,000-item value into its error line.
    msg = error(line)
    assert needle in msg and len(msg) < 250, msg
    assert "(3000 characters)" in msg or "(3008 characters)" in msg or "..." in msg, msg


def test_line_over_the_limit_is_answered_and_the_batch_goes_on_bug() -> None:
    # A line over --max-line-bytes ended the batch (exit 2): no later line was answered.
    data = "\n".join([GOOD, "x" * 500, GOOD, '{"hand": "' + "壹" * 200 + '"}', GOOD]) + "\n"
    outs = []
    for engine in ENGINES:
        r = cli("--batch", "-", "--max-line-bytes", "300", "--engine", engine, input=data)
        assert r.exit_code == 0 and r.stderr == "", r.output
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    too_long = "longer than 300 bytes, the limit (raise it with --max-line-bytes)"
    assert [json.loads(x) for x in outs[0].splitlines()] == [
        GOOD_ROW,
        {"line": 2, "error": too_long},
        GOOD_ROW,
        {"line": 4, "error": too_long},
        GOOD_ROW,
    ]


def test_input_with_no_line_end_stops_with_one_error_line_bug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (/dev/zero, with a 1 GiB ceiling: here 10,000 bytes.) The line before keeps its answer.
    monkeypatch.setattr(protocol, "MAX_SKIP_BYTES", 10_000)
    for engine in ENGINES:
        r = cli("--batch", "-", "--max-line-bytes", "100", "--engine", engine,
                input=GOOD + "\n" + "y" * 50_000)  # fmt: skip
        assert r.exit_code == 2, r.output
        assert [json.loads(x) for x in r.stdout.splitlines()] == [GOOD_ROW]
        assert r.stderr.splitlines() == [
            "Error: batch file stdin: line 2 has no end within 10,000 bytes: not JSON lines"
            " (the limit of a line is 100 bytes)"
        ]


@pytest.mark.parametrize("engine", ENGINES)
def test_answers_before_a_read_error_are_written_bug(engine: str) -> None:
    # The reference kept up to 2,048 answers in memory: a read error lost them all.
    def lines() -> Iterator[str]:
        yield GOOD
        yield "{bad"
        yield GOOD
        raise OSError(5, "Input/output error")

    buf = io.BytesIO()
    with pytest.raises(OSError):
        calculator.run_batch(lines(), buf, engine=engine)
    rows = [json.loads(x) for x in buf.getvalue().decode().splitlines()]
    assert len(rows) == 3 and rows[0] == rows[2] == GOOD_ROW and rows[1]["line"] == 2


def test_a_fast_chunk_that_fails_is_answered_by_the_reference_bug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An exception in the compiled scorer ended the batch and lost its chunk's answers.
    lines = [GOOD, "{bad", "", GOOD]
    want = batch(lines, "reference")

    def broken(*args: Any) -> Any:
        raise RuntimeError("kernel bug")

    monkeypatch.setattr(fast._FastScorer, "chunk", broken)
    assert batch(lines, "fast") == want
    assert want[0][1:3] == [{"line": 2, "error": "bad JSON: Expecting property name enclosed in "
                            "double quotes at column 2"}, {"line": 3, "error": "blank line"}]  # fmt: skip


# The hypothesis tests: whatever the lines hold, one strict-JSON UTF-8 line out per line in.

_ids = st.one_of(
    st.text(max_size=8), st.floats(), st.integers(), st.none(), st.lists(st.floats(), max_size=2)
)
_objects = st.builds(
    lambda hand, id_, ascii_: json.dumps({"hand": hand, "id": id_}, ensure_ascii=ascii_),
    st.text(alphabet=CARD_CHARS + "X \ud800", max_size=22),
    _ids,
    st.booleans(),
)


def _surrogatepass(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")  # a lone surrogate as the bytes of one


_lines = st.one_of(st.text(), st.binary(), _objects, _objects.map(_surrogatepass))


def _check_rows(out: bytes, n: int) -> None:
    rows = out.decode("utf-8").split("\n")  # strict UTF-8: no lone surrogate, no bad byte
    assert rows.pop() == "" and len(rows) == n
    for i, row in enumerate(rows, 1):
        obj = json.loads(row)  # strict: no raw control character
        json.dumps(obj, ensure_ascii=False).encode()  # no lone surrogate in an escape
        if "error" in obj:
            assert set(obj) == {"line", "error"} and obj["line"] == i, (i, obj)
            assert "internal error" not in obj["error"], obj
        else:
            assert {"win", "huxi", "reason", "deng", "fan", "score"} <= set(obj), obj


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_lines, max_size=6))
def test_any_lines_get_one_json_line_each_on_both_engines_bug(lines: list[Any]) -> None:
    outs = []
    for engine in ENGINES:
        buf = io.BytesIO()
        stats = calculator.run_batch(lines, buf, engine=engine)
        assert stats.lines == stats.results + stats.errors == len(lines)
        _check_rows(buf.getvalue(), len(lines))
        outs.append(buf.getvalue())
    assert outs[0] == outs[1]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(st.binary(max_size=80), _objects.map(_surrogatepass)), max_size=5))
def test_any_batch_file_is_answered_line_by_line_exit_0_bug(parts: list[bytes]) -> None:
    data = b"\n".join(parts)
    n = data.count(b"\n") + (not data.endswith(b"\n") and data != b"")
    outs = []
    for engine in ENGINES:
        r = cli("--batch", "-", "--max-line-bytes", "64", "--engine", engine, input=data)
        assert r.exit_code == 0 and r.stderr == "", r.output
        _check_rows(r.stdout_bytes, n)
        outs.append(r.stdout_bytes)
    assert outs[0] == outs[1]


# --------------------------------------------------------------------------- item 11


@pytest.mark.parametrize(
    ("hand", "melds", "card", "message"),
    [
        (EX1[0] + "十", EX1[1], EX1[2],
         "22 cards with the hu card (15 in hand, 6 on the table): a seat holds at most 21 with"
         " 0 跑/提 (RULES §7)"),
        # a 跑胡 onto a 坎 with a 跑 on the table: 22 cards, one more than a seat holds
        ("拾拾拾壹贰叁四五六七八九陆柒捌二二", ["pao:伍"], "拾",
         "22 cards with the hu card (17 in hand, 4 on the table): a seat holds at most 21 with"
         " 1 跑/提 (RULES §7)"),
        ("壹贰叁四五六七八九陆柒捌贰柒二二", ["pao:伍", "ti:三"], "十",
         "25 cards with the hu card (16 in hand, 8 on the table): a seat holds at most 22 with"
         " 2 跑/提 (RULES §7)"),
        ("一一一一" + EX1[0] + "拾二二二", [], None,
         "22 cards in the closed hand (22 in hand, 0 on the table): a seat holds at most 21"
         " with 1 跑/提 (RULES §7)"),
        ("壹贰叁四五六七八九陆柒捌贰柒伍伍伍伍拾拾拾七七", ["chi:一,二,三"], None,
         "26 cards in the closed hand (23 in hand, 3 on the table): a seat holds at most 21"
         " with 1 跑/提 (RULES §7)"),
    ],
)  # fmt: skip
def test_more_cards_than_a_seat_holds_is_refused_bug(
    hand: str, melds: list[str], card: str | None, message: str
) -> None:
    # Such a hand was scored: "no win: wrong number of cards", or a win (the 跑胡 above: 24).
    args = [hand, *(a for m in melds for a in ("--meld", m)), *(["--card", card] if card else [])]
    r = cli(*args)
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert r.stderr.splitlines() == [f"Error: {message}"]
    req = {"hand": hand, "melds": melds, **({"card": card} if card else {})}
    assert error(json.dumps(req, ensure_ascii=False)) == message
    assert error(json.dumps(req)) == message  # the compiled parser's spelling


def test_a_seat_at_its_limit_is_still_scored() -> None:
    assert one_row(json.dumps({"hand": EX1[0], "melds": EX1[1], "card": EX1[2]}))["huxi"] == 18
    assert one_row(GOOD) == GOOD_ROW  # a closed hand of 21 with a 跑 on the table


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["三三", "--meld", "pao:三"], "6 copies of 三 across hand '三三', melds and card"),
        (["伍伍伍伍", "--card", "伍"], "5 copies of 伍 across hand '伍伍伍伍', melds and card"),
        (["伍伍", "--meld", "peng:伍", "--card", "拾"],
         "5 copies of 伍 across hand '伍伍', melds and card"),
        (["一", "--meld", "chi:一,二,三", "--meld", "peng:一", "--card", "一"],
         "6 copies of 一 across hand '一', melds and card"),
    ],
)  # fmt: skip
def test_more_than_four_copies_is_refused(args: list[str], message: str) -> None:
    r = cli(*args)
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert r.stderr.splitlines() == [f"Error: {message} (the deck has 4)"]
    hand, rest = args[0], args[1:]
    melds = [rest[i + 1] for i in range(len(rest)) if rest[i] == "--meld"]
    card = rest[rest.index("--card") + 1] if "--card" in rest else None
    req = {"hand": hand, "melds": melds, **({"card": card} if card else {})}
    assert error(json.dumps(req)) == f"{message} (the deck has 4)"
