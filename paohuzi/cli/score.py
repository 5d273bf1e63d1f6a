"""``paohuzi score``: the hand calculator (:mod:`engine.calculator`) on one hand or a batch of
JSON lines. Imports no pyarrow, duckdb, pandas, numpy or streamlit."""

from __future__ import annotations

import os
import sys

import click

from paohuzi.cli.errors import InputError


@click.command(short_help="Score a hand: 门子, 胡息, win or not; 等, 名堂, 番 and settlement.")
@click.argument("hand", required=False)
@click.option(
    "--meld",
    "-m",
    "melds",
    multiple=True,
    metavar="KIND:CARDS",
    help="A table meld: chi:A,B,C | peng:X | wei:X | chouwei:X | pao:X | ti:X (repeatable).",
)
@click.option(
    "--card",
    "-c",
    metavar="CARD",
    help="The hu card. Without it HAND includes the winning card and every triple is a 坎.",
)
@click.option(
    "--source",
    "-s",
    type=click.Choice(["own", "other", "liang", "liang-dealer", "discard"], case_sensitive=False),
    help="Where the hu card comes from (default other): own = 自摸, liang = a non-dealer on "
    "the 亮张, liang-dealer = the dealer's 21 cards (both 天胡).",
)
@click.option("--haidi", is_flag=True, help="The hu card is the last stock card (海底).")
@click.option("--dihu", is_flag=True, help="地胡: a non-dealer wins on the first stock card.")
@click.option("--tianhu", is_flag=True, help="Score as 天胡 (implied by the liang sources).")
@click.option("--rules", "-r", default="hunan", show_default=True, help="Rule preset.")
@click.option(
    "--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a rule switch."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--ascii", "ascii_", is_flag=True, help="Cards as s1..s10 / b1..b10.")
@click.option(
    "--batch",
    metavar="FILE",
    help="Score JSON lines from FILE ('-' for stdin), one JSON line out per line in.",
)
@click.option(
    "--engine",
    type=click.Choice(["auto", "fast", "reference"]),
    default="auto",
    show_default=True,
    help="With --batch: fast = the compiled scorer (numba; chunks of lines, compiled once on "
    "first use, then cached); reference = the Python evaluator, line by line; auto = fast "
    "when numba is installed. Both write the same bytes. A single HAND always uses the "
    "reference.",
)
@click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1),
    default=1 << 16,
    show_default=True,
    metavar="N",
    help="With --batch: a longer input line is answered with an error line (and skipped).",
)
def score(
    hand: str | None,
    melds: tuple[str, ...],
    card: str | None,
    source: str | None,
    haidi: bool,
    dihu: bool,
    tianhu: bool,
    rules: str,
    overrides: tuple[str, ...],
    as_json: bool,
    ascii_: bool,
    batch: str | None,
    engine: str,
    max_line_bytes: int,
) -> None:
    """Score a hand: best split into 门子, 胡息, win or not and why; with --card also 等,
    名堂, 番, score and settlement (RULES.md §10.3, §11).

    \b
    paohuzi score "壹贰叁柒捌玖六七八九九" --meld pao:伍 --meld peng:三 --meld chi:二,七,十
    paohuzi score "壹贰叁四五六七八九陆柒捌贰柒" -m chi:一,二,三 -m peng:伍 --card 拾 --source own
    paohuzi score --batch hands.jsonl

    A --batch line is a JSON object: {"hand": "…", "melds": ["pao:伍"], "card": "拾",
    "source": "other", "rules": "hunan", "set": ["min_huxi=10"], "haidi": false, "dihu":
    false, "tianhu": false, "id": …} (only "hand" is required; "id" is echoed). Every line in
    gets one line out, in order: win, huxi, reason, deng, fan and score, or {"line": N,
    "error": "…"} for a line that is blank, not UTF-8, not a JSON object, longer than
    --max-line-bytes or not a valid request. The exit status is 0 when every line was
    answered (error lines included); 2 when the file cannot be read, or has no line end in
    its first GiB (what was answered before is written).
    --engine fast (the default when numba is installed) scores chunks of lines with the
    compiled kernel, ~30× the reference, same bytes; the first run compiles it (~40 s, said
    once on a terminal's stderr), later runs load it from numba's cache.
    """
    from engine import calculator
    from engine.errors import PaohuziError

    try:
        if batch is not None:
            if hand is not None:
                raise InputError("give either HAND or --batch FILE, not both")
            used = [n for n, v in (("--meld", melds), ("--card", card), ("--source", source)) if v]
            used += [
                f"--{n}" for n, v in (("haidi", haidi), ("dihu", dihu), ("tianhu", tianhu)) if v
            ]
            if used:
                raise InputError(
                    f"{used[0]} cannot be used with --batch (put it in each JSON line)"
                )
            _run_batch(batch, rules, overrides, max_line_bytes, engine)
            return
        if hand is None:
            raise InputError("missing HAND (or --batch FILE) (see 'paohuzi score --help')")
        calc = calculator.calculate(
            hand,
            melds,
            card,
            source,
            rules=rules,
            overrides=overrides,
            haidi=haidi,
            dihu=dihu,
            tianhu=tianhu,
        )
    except PaohuziError as e:
        raise InputError(str(e)) from None
    click.echo(calc.to_json(ascii_) if as_json else calc.to_text(ascii_))


def _run_batch(
    path: str, rules: str, overrides: tuple[str, ...], max_line_bytes: int, engine: str
) -> None:
    from engine import calculator

    calculator.load_rules(rules, overrides)  # a bad default preset is a usage error
    try:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
    except OSError as e:
        raise InputError(f"cannot read batch file {path!r}: {e.strerror}") from None
    out = sys.stdout.buffer
    try:
        with stream:
            lines = calculator.read_lines(stream, max_line_bytes)
            calculator.run_batch(lines, out, rules=rules, overrides=overrides, engine=engine)
    except calculator.LineTooLong as e:
        name = "stdin" if path == "-" else repr(path)
        raise InputError(f"batch file {name}: {e}") from None
    except BrokenPipeError:
        # The reader went away (`| head`): not an error; silence the flush at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
    except OSError as e:
        raise InputError(f"cannot read batch file {path!r}: {e.strerror or e}") from None
