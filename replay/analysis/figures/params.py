"""Named parameters for the statistics layer's SQL (DuckDB ``$name``).

A statement is built with one :class:`Params`: every value that comes from a person or from
the store (run names, seats, policies, thresholds, limits, masks) is bound to a name and the
text carries only ``$name``; the names are made here, from this package's own constant
prefixes and a counter, never from the values. So no value is ever part of the SQL text, and
no statement depends on the order of its placeholders.

>>> p = Params()
>>> p.in_("run", ["a", "b"], "run"), p.bind(3, "seat"), p.in_("seat", [], "seat")
('run IN ($run_0, $run_1)', '$seat', 'false')
>>> p.values
{'run_0': 'a', 'run_1': 'b', 'seat': 3}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

#: A statement: its SQL text and the values of its ``$name`` parameters.
Statement = tuple[str, dict[str, Any]]

_NAME = re.compile(r"[a-z][a-z0-9_]*")


class Params:
    """The values of one statement's ``$name`` parameters."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def bind(self, value: Any, name: str) -> str:
        """``$name`` bound to ``value`` (``name_1``, ``name_2``, … when ``name`` is taken by
        another value; the same value under the same name is bound once)."""
        if not _NAME.fullmatch(name):
            raise ValueError(f"bad parameter name {name!r}")
        key, k = name, 0
        while key in self.values and self.values[key] != value:
            k += 1
            key = f"{name}_{k}"
        self.values[key] = value
        return f"${key}"

    def in_(self, col: str, values: Iterable[Any], name: str) -> str:
        """``col IN ($name_0, …)``, one parameter per value (``false`` for none): an ``IN``
        list of parameters lets DuckDB prune the hive partitions of the runs."""
        names = [self.bind(v, f"{name}_{i}") for i, v in enumerate(values)]
        return f"{col} IN ({', '.join(names)})" if names else "false"

    def statement(self, sql: str) -> Statement:
        return sql, dict(self.values)
