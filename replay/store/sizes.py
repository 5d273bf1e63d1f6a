"""Sizes as people write them (``1GiB``, ``512 MB``) and as this product prints them, and the
one reader of a limit set in an environment variable (the SQL page's,
:mod:`dashboard.services.sqllimits`; the store's DuckDB connections',
:mod:`replay.store.ducklimits`)."""

from __future__ import annotations

import re

__all__ = ["parse_size", "fmt_size", "read_limit"]

_UNITS = {
    "": 1,
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*")


def parse_size(text: str) -> int | None:
    """Bytes in ``text`` (``1GiB``, ``512 MB``, ``976.5 KiB``, ``0 bytes``), else ``None``.

    >>> parse_size("1GiB"), parse_size("1.5 KB"), parse_size("0 bytes"), parse_size("x")
    (1073741824, 1500, 0, None)
    """
    m = _SIZE.fullmatch(text)
    if not m or m.group(2).lower() not in _UNITS:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def fmt_size(n: int) -> str:
    """``1 GiB``, ``100 KB``: the shortest exact reading, else one decimal in binary units.

    >>> fmt_size(1024**3), fmt_size(100_000), fmt_size(1536), fmt_size(0)
    ('1 GiB', '100 KB', '1.5 KiB', '0 B')
    """
    for unit, f in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= f and n % f == 0:
            return f"{n // f} {unit}"
    for unit, f in (("TB", 1000**4), ("GB", 1000**3), ("MB", 1000**2), ("KB", 1000)):
        if n >= f and n % f == 0:
            return f"{n // f} {unit}"
    for unit, f in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= f:
            return f"{n / f:.1f} {unit}"
    return f"{n} B"


def read_limit(var: str, raw: str, lowest: int, example: str, whole: bool = False) -> int:
    """The value of the limit ``var=raw``: a size (``whole``: a whole number) of at least
    ``lowest``; ValueError naming the variable otherwise (``example``: sizes to suggest).

    >>> read_limit("X", "2KiB", 1024, "1GiB or 512MB")
    2048
    >>> read_limit("X", "lots", 1024, "1GiB or 512MB")
    Traceback (most recent call last):
    ...
    ValueError: X='lots' is not a size such as 1GiB or 512MB
    >>> read_limit("N", "0", 1, "", whole=True)
    Traceback (most recent call last):
    ...
    ValueError: N='0' is below the lowest usable value, 1
    """
    if whole:
        if not raw.isdigit():
            raise ValueError(f"{var}={raw!r} is not a whole number")
        n, shown = int(raw), str(lowest)
    else:
        size = parse_size(raw)
        if size is None:
            raise ValueError(f"{var}={raw!r} is not a size such as {example}")
        n, shown = size, fmt_size(lowest)
    if n < lowest:
        raise ValueError(f"{var}={raw!r} is below the lowest usable value, {shown}")
    return n
