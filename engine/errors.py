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
