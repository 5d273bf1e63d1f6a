"""The error hierarchy: malformed input raises, rule outcomes are values (STYLE §11)."""

from __future__ import annotations

from collections.abc import Iterable


class PaohuziError(ValueError):
    """Root of every error the product raises on bad input."""


class InvalidNotation(PaohuziError):
    """A card, meld or action string that cannot be parsed."""


class InvalidRules(PaohuziError):
    """An unknown preset, switch or switch value."""


class IllegalAction(PaohuziError):
    """An action that is not legal in the state it was applied to."""


class CorruptLog(PaohuziError):
    """A log or store that cannot be read as written."""


class ReplayDivergence(PaohuziError):
    """A log whose events do not reproduce its recorded outcome."""


#: The most characters of an input an error message quotes.
QUOTE_LIMIT = 60


def quote(text: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr`` of an input for an error message, cut to its first ``limit`` characters
    (a message never echoes a huge input back).

    >>> quote("壹X")
    "'壹X'"
    >>> quote("x" * 100)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' (100 characters)"
    """
    s = text if isinstance(text, str) else str(text)
    if len(s) <= limit:
        return repr(s)
    r = repr(s[:limit])  # the ellipsis goes inside the closing quote
    return f"{r[:-1]}…{r[-1]} ({len(s)} characters)"


#: The longest input :func:`did_you_mean` compares (difflib's matcher is quadratic in it).
SUGGEST_LIMIT = 80


def did_you_mean(word: object, choices: Iterable[str], n: int = 3) -> str:
    """The end of an error line that names the valid choices closest to ``word``
    (:func:`difflib.get_close_matches`, ignoring case), or ``""`` when none is close: the
    one helper every "unknown …" message of the product ends with (a command, a policy, a
    rule preset or switch, a run's name, an option).

    >>> did_you_mean("heuristc", ["random", "greedy", "heuristic", "learned"])
    "; did you mean 'heuristic'?"
    >>> did_you_mean("hunan-ful", ["hunan", "hunan-basic", "hunan-full", "hunan-4p"])
    "; did you mean 'hunan-full'?"
    >>> did_you_mean("zzz", ["random", "greedy"])
    ''
    """
    import difflib

    text = word if isinstance(word, str) else str(word)
    if not text or len(text) > SUGGEST_LIMIT:
        return ""
    by_key: dict[str, str] = {}
    for c in choices:
        by_key.setdefault(c.lower(), c)
    if text.lower() in by_key:
        return ""
    key = text.lower()
    close = difflib.get_close_matches(key, list(by_key), n=n, cutoff=0.6)
    if not close:
        return ""
    score = [difflib.SequenceMatcher(None, key, c).ratio() for c in close]
    close = [c for c, r in zip(close, score, strict=True) if r >= score[0] - 0.05]  # the best
    return "; did you mean " + " or ".join(quote(by_key[c]) for c in close) + "?"


#: The Unicode categories of the characters a terminal acts on instead of showing: controls
#: (C0, DEL and C1: BEL, ESC and its sequences, CSI …), format characters (the bidi
#: overrides and isolates such as U+202E, zero-width ones), lone surrogates, and the line and
#: paragraph separators.
TERMINAL_ACTS = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def printable(text: str, keep: str = "", json: bool = False) -> str:
    """``text`` with each character a terminal would act on (:data:`TERMINAL_ACTS`) written
    as its escape, as :func:`quote` writes it (``\\x07``, ``\\x1b``, ``\\u202e``) or, with
    ``json``, as JSON does (``\\u0007``: the text of a JSON document stays JSON, each such
    character being inside a string); the characters of ``keep`` (``"\\n"`` for many lines)
    stay. What the command line prints of stored names (policies, players, titles) passes
    through here; an escaped text is unchanged by a second pass.

    >>> printable("bot\\x07\\u202e\\x1b[2J 壹\\u3000")
    'bot\\\\x07\\\\u202e\\\\x1b[2J 壹\\u3000'
    >>> printable('"a\\x9b"\\n', keep="\\n", json=True)
    '"a\\\\u009b"\\n'
    """
    if text.isprintable():
        return text
    import unicodedata

    out = []
    for c in text:
        if c.isprintable() or c in keep or unicodedata.category(c) not in TERMINAL_ACTS:
            out.append(c)
        elif json:
            out.append("".join(f"\\u{u:04x}" for u in _utf16(c)))
        else:
            out.append(repr(c)[1:-1])
    return "".join(out)


def _utf16(c: str) -> list[int]:
    """The UTF-16 code units of one character (a surrogate pair beyond the BMP)."""
    n = ord(c)
    if n < 0x10000:
        return [n]
    n -= 0x10000
    return [0xD800 + (n >> 10), 0xDC00 + (n & 0x3FF)]
