"""The error hierarchy: malformed input raises, rule outcomes are values (STYLE §11)."""

from __future__ import annotations


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
