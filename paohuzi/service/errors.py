"""What the service answers when it cannot answer: ``{"error": "one line"}`` with a status
code, never a traceback and never a path of the server's filesystem.

The library's messages are the commands' messages (``paohuzi replay`` says ``run a has no
hand 9 (hands 0–7)``); :func:`public` folds one to a line, cuts it, and writes the store's
root ``DATA`` and any other absolute path by its last part.

>>> public("no run 'x' in /srv/data (runs: a)", "/srv/data")
"no run 'x' in DATA (runs: a)"
>>> public("run a: cannot read shard /srv/data/runs/run=a/hands/part-00000.parquet", "/srv/data")
'run a: cannot read shard DATA/runs/run=a/hands/part-00000.parquet'
>>> public("/srv/data2/x and /etc/other/place", "/srv/data")
'…/x and …/place'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.errors import CorruptLog, IllegalAction, PaohuziError, ReplayDivergence

#: The most characters of an error line.
MAX_MESSAGE = 400

#: An absolute path left in a message once the store's root is out: shown by its last part.
_ABSOLUTE = re.compile(r"(?<![\w.~:/-])/(?:[^\s'\"/,;()]+/)+([^\s'\"/,;()]*)")


class ApiError(Exception):
    """An answer other than 200: ``status`` and the one-line ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Refusal(Exception):
    """An import refused before its body is read (401 with ``WWW-Authenticate``, 403, 503
    with ``Retry-After``): its status, message and headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


def public(text: object, roots: str | Iterable[str] = (), name: str = "DATA") -> str:
    """``text`` on one line (whitespace folded, at most :data:`MAX_MESSAGE` characters),
    with the store's ``roots`` (absolute paths) written ``name`` and every other absolute
    path by its last part."""
    line = " ".join(str(text).split())
    for root in sorted([roots] if isinstance(roots, str) else set(roots), key=len, reverse=True):
        root = root.rstrip("/")
        if root.startswith("/"):
            line = re.sub(re.escape(root) + r"(?=/|\b|$)", name, line)
    return one_line(_ABSOLUTE.sub(lambda m: "…/" + m.group(1), line))


def one_line(text: object) -> str:
    """``text`` on one line (whitespace folded), at most :data:`MAX_MESSAGE` characters, as
    it is otherwise: what a client sent (a request's path) is shown so, not as a path of
    the server.

    >>> one_line("method not allowed: PUT /runs/base")
    'method not allowed: PUT /runs/base'
    """
    line = " ".join(str(text).split())
    if len(line) > MAX_MESSAGE:
        line = line[: MAX_MESSAGE - 3] + "..."
    return line or "error"


def status_of(e: BaseException) -> int:
    """The status code of a library error: 409 for a run or hand that exists but cannot be
    read as written (damaged, refused folder, a log that does not replay) or written as
    asked (a simulated run named for an import), 503 for a run whose lock another writer
    held past the wait, 400 for any other bad input (an unknown 名堂, a step out of range)."""
    from replay.replayer.hand import UnknownHand
    from replay.replayer.replay_schema import ReplayFileError
    from replay.store.layout import StoreError
    from replay.store.manifest import RunBusy

    if isinstance(e, UnknownHand):
        return 404
    if isinstance(e, RunBusy):  # another import into the run held its lock too long
        return 503
    if isinstance(e, CorruptLog | StoreError | ReplayFileError | IllegalAction | ReplayDivergence):
        return 409
    if isinstance(e, PaohuziError):
        return 400
    return 500
