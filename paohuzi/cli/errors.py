"""The command line's errors: :class:`InputError` (one ``Error: …`` line, exit status 2),
:func:`input_error` and :func:`bound_echoes`, which every error line passes through. Every
command imports these from here; :mod:`paohuzi.cli.main` (the group) too."""

from __future__ import annotations

import os
import re

import click

from engine.errors import QUOTE_LIMIT, printable, quote


class InputError(click.ClickException):
    """Bad user input: printed as one ``Error: …`` line, exit status 2."""

    exit_code = 2


def input_error(msg: object) -> InputError:
    """An :class:`InputError` of ``msg`` on one line: whitespace folded, the inputs it
    echoes cut (:func:`bound_echoes`), at most 400 characters (a long path cut with
    ``...``)."""
    text = bound_echoes(" ".join(str(msg).split()))
    return InputError(text if len(text) <= 400 else text[:397] + "...")


#: The most characters of a path an error line shows, quoted or not, and of any other
#: unquoted word (a quoted input other than a path: :data:`~engine.errors.QUOTE_LIMIT`).
PATH_LIMIT = 256

#: A quoted input, as messages quote input ('x' or "x", their ``repr``): after the start, a
#: space or an opening bracket; before a space, a closing bracket, punctuation or the end;
#: not one :func:`~engine.errors.quote` has cut already (its length follows it).
_QUOTED = re.compile(
    r"""(?<![^\s(\[{=:,])(?:'[^']*'|"[^"]*")(?=[\s)\]},.:;!?]|$)(?! \(\d+ characters\))"""
)
_BARE = re.compile(rf"\S{{{PATH_LIMIT + 1},}}")


def bound_echoes(text: str, limit: int = QUOTE_LIMIT) -> str:
    """An error line with every input it echoes cut by :func:`engine.errors.quote` (its
    first characters, an ellipsis and its length): a quoted input longer than ``limit``
    characters, a path or any unquoted word longer than :data:`PATH_LIMIT`; and the
    characters a terminal acts on (BEL, ESC, bidi overrides …) an unquoted echo holds
    written as escapes (:func:`engine.errors.printable`). Every error line of the command
    line passes through here (:class:`PaohuziGroup`).

    >>> bound_echoes("unknown policy '" + "x" * 100 + "' (built-in: random)", 8)
    "unknown policy 'xxxxxxxx…' (100 characters) (built-in: random)"
    >>> bound_echoes("Got unexpected extra argument (" + "y" * 300 + ")", 8)
    "Got unexpected extra argument ('yyyyyyyy…' (300 characters))"
    >>> bound_echoes("no run 'a' in /srv/data")
    "no run 'a' in /srv/data"
    >>> bound_echoes("unknown policy bot\\x07\\u202e")
    'unknown policy bot\\\\x07\\\\u202e'
    >>> path = "'/srv/" + "z" * 100 + "'"  # a path stays whole up to PATH_LIMIT
    >>> bound_echoes(f"cannot read {path}", 8) == f"cannot read {path}"
    True
    """

    def quoted(m: re.Match[str]) -> str:
        word = m.group()
        cap = PATH_LIMIT if os.sep in word else limit
        if len(word) - 2 <= cap:
            return word
        import ast
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # an invalid escape in the literal
                value = ast.literal_eval(word)  # the input the repr stands for
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = word[1:-1]
        return quote(value, cap)

    def bare(m: re.Match[str]) -> str:
        word = m.group()
        core = word.lstrip("([{")
        head = word[: len(word) - len(core)]
        body = core.rstrip(")]},.:;")
        return head + quote(body, PATH_LIMIT if os.sep in body else limit) + core[len(body) :]

    return printable(_BARE.sub(bare, _QUOTED.sub(quoted, text)), keep="\n\t")
