"""The one check of a file a manifest lists against its entry (docs/LOG_FORMAT.md §1):
present, a regular file, of the listed size, with the listed footer row count (and the
hand ids a shard entry implies), and of the listed SHA-256.

:func:`file_problems` collects every problem (``paohuzi verify``, a lenient reader, STYLE
§12); :func:`check_listed` raises the first (every reader of the store, through
:func:`replay.store.scan.check_file`). Both run the same steps in the same order — the
cheap ones first, the SHA-256 last — and read a file's facts through a :class:`FileFacts`:
:class:`replay.store.scan.ChecksumCache` (remembered by size, mtime, ctime and inode) or
:class:`replay.store.scan.Uncached` (read every time, what the deep check trusts).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from engine.errors import CorruptLog
from replay.store.fsinfo import file_kind

__all__ = ["FileFacts", "FileProblem", "check_listed", "error_text", "file_problems", "read_errors"]


class FileFacts(Protocol):
    """What reading a file tells: its SHA-256 and its footer."""

    def sha256(self, path: Path | str, st: os.stat_result) -> str: ...

    def footer(
        self, path: Path | str, st: os.stat_result, hand_ids: bool
    ) -> tuple[int, tuple[int, int] | None]:
        """(rows, (first, last) hand id or None); raises as
        :func:`pyarrow.parquet.read_metadata` does."""
        ...


#: The ways a listed file can differ from its manifest entry.
Kind = Literal["missing", "not_regular", "bytes", "corrupt", "rows", "hands", "sha256"]


@dataclass(frozen=True)
class FileProblem:
    """One way a listed file differs from its manifest entry. ``kind``: ``missing``,
    ``not_regular`` (``got``: what it is), ``bytes``, ``rows``, ``hands`` (``got`` and
    ``want``: the file's and the manifest's), ``corrupt`` (``got``: the error reading its
    footer) or ``sha256``. ``fatal``: nothing more can be read from the file.

    Said two ways: by a reader, in the one line that leaves the run out (:meth:`line`, with
    the likely cause), and by ``paohuzi verify``, in its list (:meth:`reason`):

    >>> p = FileProblem("bytes", 20699, 20700)
    >>> p.line("run r: shard file hands/part-00000.parquet")
    'run r: shard file hands/part-00000.parquet has 20,699 bytes, the manifest says 20700 (corrupt, truncated or replaced)'
    >>> p.reason("hands/part-00000.parquet")
    'hands/part-00000.parquet has 20,699 bytes, the manifest says 20,700'
    """

    kind: Kind
    got: Any = None
    want: Any = None
    fatal: bool = False

    def line(self, where: str) -> str:
        """The readers' line, after ``where`` names the file (``run r: shard file
        hands/part-00000.parquet``), with the likely cause."""
        if self.kind == "bytes":
            return (
                f"{where} has {self.got:,} bytes, the manifest says {self.want}"
                " (corrupt, truncated or replaced)"
            )
        if self.kind == "corrupt":
            return f"{where} is corrupt: {str(self.got).splitlines()[0]}"
        if self.kind == "hands":
            return f"{where} {self._text()} (a shard out of place)"
        if self.kind == "sha256":
            return f"{where} does not match its SHA-256 in the manifest (edited?)"
        return f"{where} {self._text()}"

    def reason(self, rel: str) -> str:
        """The verifier's line about the file ``rel`` (its report names the run and shard)."""
        if self.kind == "bytes":
            want = f"{self.want:,}" if type(self.want) is int else self.want
            return f"{rel} has {self.got:,} bytes, the manifest says {want}"
        if self.kind == "corrupt":
            return f"cannot read {rel}: {error_text(self.got)}"
        if self.kind == "sha256":
            return f"{rel} does not match its SHA-256 in the manifest"
        return f"{rel} {self._text()}"

    def _text(self) -> str:
        """What both lines say alike, after the file's name."""
        if self.kind == "missing":
            return "is missing"
        if self.kind == "not_regular":
            return f"is {self.got}, not a regular file"
        if self.kind == "rows":
            return f"has {self.got:,} rows, the manifest says {self.want}"
        if self.kind == "hands":
            return (
                f"holds hands {self.got[0]}–{self.got[1]}, the manifest says"
                f" {self.want[0]}–{self.want[1]}"
            )
        raise ValueError(f"unknown file problem {self.kind!r}")


def read_errors(*others: type[Exception]) -> tuple[type[Exception], ...]:
    """``others`` and, once pyarrow is loaded, ``pyarrow.ArrowException``: what an ``except``
    around a read that may not touch pyarrow (a footer from a cache) catches, without
    importing pyarrow for it — a read that raised pyarrow's error had loaded it."""
    pa = sys.modules.get("pyarrow")
    return others if pa is None else (*others, pa.ArrowException)


def error_text(e: BaseException) -> str:
    """An error's message on one line (its type's name when it has none)."""
    return " ".join(str(e).split()) or type(e).__name__


_MISSING = FileProblem("missing", fatal=True)


def file_problems(
    path: Path | str,
    entry: dict[str, Any],
    facts: FileFacts,
    rows: int | None = None,
    hands: tuple[int, int, bool] | None = None,
    checksums: bool = True,
) -> list[FileProblem]:
    """Every problem of the file ``path`` (resolved inside its run folder) against its
    manifest ``entry``, in the order :func:`check_listed` meets them; none when it is
    sound. ``rows``: the row count the shard entry implies; ``hands``: (first, count, must
    start at first), the hand ids it may hold; ``checksums``: whether its size and SHA-256
    are checked. A file that cannot be found or read (a ``fatal`` problem) is not checked
    further, except for its SHA-256 when its footer is unreadable."""
    try:
        st = os.stat(path)
    except OSError:
        return [_MISSING]
    return list(_problems(path, st, entry, facts, rows, hands, checksums))


def check_listed(
    path: Path | str,
    entry: dict[str, Any],
    facts: FileFacts,
    where: str,
    rows: int | None = None,
    hands: tuple[int, int, bool] | None = None,
) -> os.stat_result:
    """:func:`file_problems`, strict: the stat the checks were made on, or
    :class:`CorruptLog` at the first problem, its line after ``where`` (which names the
    file). Stops there: a damaged file is not hashed."""
    try:
        st = os.stat(path)
    except OSError:
        raise CorruptLog(_MISSING.line(where)) from None
    problem = next(_problems(path, st, entry, facts, rows, hands, True), None)
    if problem is not None:
        raise CorruptLog(problem.line(where))
    return st


def _problems(
    path: Path | str,
    st: os.stat_result,
    entry: dict[str, Any],
    facts: FileFacts,
    rows: int | None,
    hands: tuple[int, int, bool] | None,
    checksums: bool,
) -> Iterator[FileProblem]:
    """The checks after the stat, lazily, in their order: the file's kind, size, footer
    (row count, hand ids) and SHA-256 (not of a file of another size: it cannot match)."""
    if not stat.S_ISREG(st.st_mode):  # a FIFO would hang a read, a device never end
        yield FileProblem("not_regular", file_kind(st.st_mode), fatal=True)
        return
    sized = not checksums or st.st_size == entry.get("bytes")
    if not sized:
        yield FileProblem("bytes", st.st_size, entry.get("bytes"))
    try:
        n_rows, ids = facts.footer(path, st, hands is not None)
    except read_errors(OSError, ValueError) as e:
        yield FileProblem("corrupt", e, fatal=True)
    else:
        if n_rows != entry.get("rows") or (rows is not None and n_rows != rows):
            yield FileProblem("rows", n_rows, entry.get("rows"))
        if hands is not None and ids is not None:
            first, n, starts = hands
            if ids[0] < first or ids[1] > first + n - 1 or (starts and ids[0] != first):
                yield FileProblem("hands", ids, (first, first + n - 1))
    if checksums and sized and facts.sha256(path, st) != entry.get("sha256"):
        yield FileProblem("sha256")


def resolve_shard_path(run_path: Path, rel: Any) -> Path:
    """The file a manifest entry names, which must lie inside its run folder (a manifest is
    data, never trusted with ``../`` or a symlink out); raises :class:`CorruptLog` otherwise.
    Every read path (CLI, verify, dashboard) resolves shard files through here."""
    return Path(_resolve(run_path, rel, None))


def _resolve(run_path: Path | str, rel: Any, dirs: dict[str, str] | None) -> str:
    """:func:`resolve_shard_path` as a string; ``dirs`` (one scan's memo of resolved
    folders, :attr:`ChecksumCache.dirs`) saves resolving the same folders for every file:
    then only the file itself is checked for being a symlink."""
    if dirs is not None and isinstance(rel, str) and rel and "\x00" not in rel:
        parent, name = os.path.split(rel)
        if (
            name not in ("", ".", "..")
            and ".." not in parent.split("/")
            and not rel.startswith("/")
        ):
            run = str(run_path)
            base = dirs.get(run)
            if base is None:
                base = dirs[run] = os.path.realpath(run)
            key = f"{run}\x00{parent}"
            folder = dirs.get(key)
            if folder is None:
                folder = dirs[key] = os.path.realpath(os.path.join(base, parent))
            path = os.path.join(folder, name)
            if (folder == base or folder.startswith(base + os.sep)) and not os.path.islink(path):
                return path
    base_p = Path(run_path).resolve()
    if not isinstance(rel, str) or not rel or "\x00" in rel:
        raise CorruptLog(f"run {base_p.name.removeprefix('run=')}: bad shard path {rel!r}")
    resolved = (base_p / rel).resolve()
    if not resolved.is_relative_to(base_p) or resolved == base_p:
        raise CorruptLog(
            f"run {base_p.name.removeprefix('run=')}: shard path {rel!r} is outside the run folder"
        )
    return str(resolved)
