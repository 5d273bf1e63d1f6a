"""Module attributes built on first use (PEP 562): the Arrow schemas and the manifest's
validator, which need pyarrow or pydantic-core, are made only when a caller reads them, so a
reader that asks DuckDB (``paohuzi stats`` with its scan remembered) never imports them.

>>> import types
>>> m = types.ModuleType("m")
>>> m.__getattr__ = lazy_attributes("m", {"X": lambda: 42})
>>> m.X
42
>>> m.Y
Traceback (most recent call last):
...
AttributeError: module 'm' has no attribute 'Y'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(module: str, builders: Mapping[str, Callable[[], Any]]) -> Callable[[str], Any]:
    """A module's ``__getattr__``: each name of ``builders`` is the value its builder returns
    (a cached builder makes one object for every caller); any other name is an
    AttributeError, as for a module without one."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's own name
        build = builders.get(name)
        if build is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return build()

    return __getattr__
