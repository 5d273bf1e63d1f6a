"""What every route of the service shares (:class:`Context`: the store, its limits, one-line
messages without server paths, the query time limit) and the parameter types its routes
declare (strict integers, run names, hand ids)."""

# No ``from __future__ import annotations``: the parameter types are read by FastAPI.

import json
import re
import threading
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import Path as PathParam
from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from engine.errors import PaohuziError, quote
from paohuzi.service import models
from paohuzi.service.deadline import Budget
from paohuzi.service.errors import ApiError, public
from paohuzi.service.limits import Limits

#: What the store's root is called in a message (docs/SERVICE.md).
ROOT_NAME = "DATA"

T = TypeVar("T")

#: The error answers every endpoint documents.
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": models.ErrorBody, "description": "A query value the library refuses."},
    404: {"model": models.ErrorBody, "description": "No such run or hand."},
    409: {"model": models.ErrorBody, "description": "The run or hand is damaged."},
    422: {"model": models.ErrorBody, "description": "A parameter of the wrong type or range."},
    503: {"model": models.ErrorBody, "description": "The query took longer than the limit."},
}

#: The uint32 of ``hands.hand_id``.
MAX_HAND_ID = (1 << 32) - 1


def _written_in_digits(signed: bool) -> BeforeValidator:
    """An integer parameter as written: ASCII digits, after a ``-`` if ``signed`` (pydantic
    alone also reads ``1_0`` as 10, ``+5``, `` 5 `` and other digits than 0–9)."""
    pattern = re.compile(r"-?[0-9]+" if signed else r"[0-9]+")
    what = "digits 0-9" + (", after a - if negative" if signed else "")

    def check(value: Any) -> Any:
        if isinstance(value, str) and not pattern.fullmatch(value):
            raise PydanticCustomError(
                "int_parsing",
                "Input should be an integer written in {what}, not {given}",
                {"what": what, "given": quote(value)},
            )
        return value

    return BeforeValidator(check)


#: Integer parameters (path and query) are read strictly so.
DIGITS = _written_in_digits(signed=False)
SIGNED = _written_in_digits(signed=True)

RunName = Annotated[str, PathParam(description="The run's name (paohuzi runs).", max_length=200)]
HandId = Annotated[
    int, PathParam(description="The hand's id in its run.", ge=0, le=MAX_HAND_ID), DIGITS
]


def filter_names() -> tuple[list[str], list[str]]:
    """The values of the ``outcome`` and ``mingtang`` filters: the outcome names, and the
    名堂 pinyin ids then their names (what :func:`replay.store.manage.outcome_code` and
    :func:`~replay.store.manage.mingtang_mask` read; the API takes them spelled so)."""
    from engine.mingtang import REGISTRY
    from engine.state import OutcomeKind
    from replay.schema import MINGTANG_BITS

    names = list(MINGTANG_BITS)
    names += sorted({REGISTRY[p].name for p in MINGTANG_BITS})
    return [k.name.lower() for k in OutcomeKind], names


def one_of(names: list[str]) -> str:
    """A pattern of exactly one of ``names``."""
    return "^(?:" + "|".join(re.escape(n) for n in names) + ")$"


def line(obj: Any) -> bytes:
    """One line of newline-delimited JSON."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"


class Context:
    """The store at ``root`` served within ``lim``; ``token``: the import token's bytes
    (None: import disabled)."""

    def __init__(
        self, root: Path, lim: Limits, token: bytes | None, refresh: float | None = None
    ) -> None:
        from replay.store.snapshot import LiveStore, refresh_from_env

        self.root = root
        self.roots = {str(root.absolute()), str(root.resolve())}
        self.lim = lim
        self.token = token
        outcomes, mingtang_names = filter_names()
        self.choices = {"outcome": outcomes, "mingtang": mingtang_names}
        # A stale catalog is rebuilt by the connection that finds it so, in a temporary
        # file named by the process id: two threads of this process must not rebuild it
        # at once.
        self.connecting = threading.Lock()
        #: the store's checked state, kept and revalidated (replay.store.snapshot)
        self.live = LiveStore(root, refresh if refresh is not None else refresh_from_env())
        #: the catalog connection of the newest generation, and the one before (requests
        #: still reading it hold cursors of it)
        self._catalogs: list[tuple[str, Any, str]] = []

    def say(self, e: object) -> str:
        """A message on one line, without the server's paths."""
        return public(e, self.roots, ROOT_NAME)

    def store(self) -> Any:
        """The store, answering its scans from the kept state (the one this request was
        pinned to by :mod:`paohuzi.service.caching`, else the live one)."""
        from replay.store.runs import Store

        return Store(self.root, live=_Pinned(self.live))

    def known(self, st: Any, name: str) -> None:
        """404 unless the store has a run folder ``name`` (with the library's message)."""
        from replay.store.layout import check_run_name

        if name in st.run_names():
            return
        try:
            check_run_name(name)
            st.run(name)
        except PaohuziError as e:
            raise ApiError(404, str(e)) from None

    def connect(self, st: Any) -> tuple[Any, Any]:
        """The store's scan and a cursor of the catalog connection kept for its generation
        (opened on the first request of a generation; the one before is closed when a
        third comes)."""
        state = st.scan()
        with self.connecting:
            for sig, con, search in self._catalogs:
                if sig == state.signature:
                    return state, _cursor(con, search)
            con = st.connect(state)
            # a cursor is a connection of its own: the session's file_search_path (the
            # catalog's relative paths) is set on each
            (search,) = con.execute("SELECT current_setting('file_search_path')").fetchone()
            self._catalogs.append((state.signature, con, str(search or "")))
            while len(self._catalogs) > 2:
                _, old, _ = self._catalogs.pop(0)
                old.close()
            return state, _cursor(con, str(search or ""))

    def timed(self, st: Any, work: Callable[[Any, Any], T]) -> T:
        """``work(state, con)`` on the store's scan and a new catalog connection, within
        the query time limit."""
        result, con, _ = self.timed_open(st, work)
        con.close()
        return result

    def timed_open(self, st: Any, work: Callable[[Any, Any], T]) -> tuple[T, Any, Budget]:
        """:meth:`timed` with the connection left open for what the caller reads next (and
        closes): ``work``'s result, the connection and the budget left to time the rest
        (the ndjson export's batches). 503 when the limit stopped ``work``; the connection
        is closed if ``work`` fails."""
        state, con = self.connect(st)
        budget = Budget(con, self.lim.query_seconds)
        done = False
        try:
            with budget.running():
                result = work(state, con)
            done = True
            return result, con, budget
        except Exception:
            if budget.spent:
                raise ApiError(503, budget.message) from None
            raise
        finally:
            if not done:
                con.close()


def _cursor(con: Any, search: str) -> Any:
    cur = con.cursor()
    if search:
        cur.execute("SET file_search_path = ?", [search])
    return cur


#: The store state a request is answered from: set by :mod:`paohuzi.service.caching` for
#: each GET, so that the whole answer (and the key it is kept under) names one state.
PINNED: ContextVar[Any] = ContextVar("paohuzi_pinned_state", default=None)


class _Pinned:
    """A :class:`~replay.store.snapshot.LiveStore` seen by one request: the state pinned for
    it, else the live state."""

    def __init__(self, live: Any) -> None:
        self.live = live

    def state(self) -> Any:
        pinned = PINNED.get()
        return pinned if pinned is not None else self.live.state()
