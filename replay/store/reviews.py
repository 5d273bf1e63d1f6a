"""Stored reviews: review shard files in the run folder, listed in its manifest and checked
on every read like the other shard files (docs/LOG_FORMAT.md §11).

A review is fixed by its **key** — rollouts per option, rollout policy, seed — and the
decision it values: decision ``k`` of a hand is valued with ``derive_seed(seed, "review",
k)`` whatever seats are reviewed beside it (replay.review.hand). So the store keeps, per key,
the reviewed **(hand, seat)** pairs: every decision of that seat in that hand, every option
with its four estimates and its paired gain over the option played. A review asked for
again reads the pairs it holds and computes only the others; a review with another key is
stored beside, never over, the first.

* ``reviews/part-NNNNN.parquet`` — one row per option of each reviewed decision
  (:data:`SCHEMA`), rows in (hand, step, option) order, at most :data:`PART_HANDS` hands;
* the manifest's ``reviews`` list — per file: ``path``, ``rows``, ``bytes``, ``sha256``
  (as every shard file), ``version``, the key (``rollouts``, ``rollout_policy``, ``seed``)
  and ``hands``: ``[first, last, seats]`` ranges of consecutive hands reviewed for the same
  seats (``seats`` a bit mask: bit ``s`` for seat ``s``).

A file that fails its checks (missing, another size, row count or SHA-256) is named in one
warning and left out: its pairs are computed again (and stored anew). Files are written under
the run's lock, atomically, and listed after; a run being written is reviewed but not stored.
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import CorruptLog, PaohuziError
from engine.judge import DecisionReview, Gain, judge
from engine.search import Estimate, OptionValue
from replay.lazy import lazy_attributes
from replay.store.manifest_schema import REVIEW_VERSION

if TYPE_CHECKING:
    import pyarrow as pa

#: The manifest key and the folder.
REVIEWS = "reviews"
#: 2: each option's paired gain over the played one (``gain_*`` columns); files of version
#: 1 are not read (their decisions are reviewed again when asked).
VERSION = REVIEW_VERSION
#: Hands per review file (a file is read whole per hand asked for: keep it small).
PART_HANDS = 1000
ESTIMATES = ("delta", "win", "huang", "win_huxi")
#: An option's gain over the played one (engine.judge.Gain): mean, low, high (n: the rollouts).
GAINS = ("delta", "win")

if TYPE_CHECKING:
    #: The columns of a review file.
    SCHEMA: pa.Schema
else:  # built on first use: a reader of the manifest alone never imports pyarrow
    __getattr__ = lazy_attributes(__name__, {"SCHEMA": lambda: _schema()})


@functools.cache
def _schema() -> pa.Schema:
    """:data:`SCHEMA` (one object for every caller)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("hand_id", pa.uint32()),
            ("step", pa.uint16()),
            ("seat", pa.uint8()),
            ("phase", pa.string()),
            ("played", pa.int16()),
            ("action", pa.int16()),
            *[
                (f"{e}_{f}", pa.uint32() if f == "n" else pa.float64())
                for e in ESTIMATES
                for f in ("mean", "low", "high", "n")
            ],
            *[(f"gain_{g}_{f}", pa.float64()) for g in GAINS for f in ("mean", "low", "high")],
        ]
    )


_PART = re.compile(r"^reviews/part-(\d{5,})\.parquet$")


@dataclass(frozen=True)
class Key:
    """What a review's numbers depend on."""

    rollouts: int
    rollout_policy: str
    seed: int

    def of(self, entry: dict[str, Any]) -> bool:
        return (
            entry.get("rollouts") == self.rollouts
            and entry.get("rollout_policy") == self.rollout_policy
            and entry.get("seed") == self.seed
            and entry.get("version") == VERSION
        )


def part_path(index: int) -> str:
    return f"{REVIEWS}/part-{index:05d}.parquet"


def coverage_ranges(pairs: dict[int, int]) -> list[list[int]]:
    """``{hand: seat mask}`` as ``[first, last, mask]`` ranges.

    >>> coverage_ranges({3: 1, 4: 1, 5: 3, 9: 3})
    [[3, 4, 1], [5, 5, 3], [9, 9, 3]]
    """
    out: list[list[int]] = []
    for h in sorted(pairs):
        m = pairs[h]
        if out and out[-1][1] == h - 1 and out[-1][2] == m:
            out[-1][1] = h
        else:
            out.append([h, h, m])
    return out


def coverage_of(entry: dict[str, Any]) -> dict[int, int]:
    """An entry's ``hands`` ranges as ``{hand: seat mask}``."""
    out: dict[int, int] = {}
    for lo, hi, mask in entry.get("hands") or ():
        for h in range(int(lo), int(hi) + 1):
            out[h] = out.get(h, 0) | int(mask)
    return out


# ---------------------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------------------


def table_of(items: Iterable[tuple[int, Sequence[DecisionReview]]]) -> pa.Table:
    """The rows of ``(hand, decisions)`` (decisions in step order), hands in order."""
    import pyarrow as pa

    schema = _schema()
    cols: dict[str, list[Any]] = {f.name: [] for f in schema}
    for hand, decisions in sorted(items, key=lambda x: x[0]):
        for d in sorted(decisions, key=lambda d: d.step):
            for v, gain in zip(d.options, d.gains, strict=True):
                cols["hand_id"].append(hand)
                cols["step"].append(d.step)
                cols["seat"].append(d.seat)
                cols["phase"].append(d.phase)
                cols["played"].append(d.played)
                cols["action"].append(v.action)
                for e in ESTIMATES:
                    est: Estimate = getattr(v, e)
                    cols[f"{e}_mean"].append(est.mean)
                    cols[f"{e}_low"].append(est.low)
                    cols[f"{e}_high"].append(est.high)
                    cols[f"{e}_n"].append(est.n)
                for g in GAINS:
                    est = getattr(gain, g)
                    for f in ("mean", "low", "high"):
                        cols[f"gain_{g}_{f}"].append(getattr(est, f))
    return pa.Table.from_pydict(cols, schema=schema)


def decisions_of(table: pa.Table) -> dict[tuple[int, int], list[DecisionReview]]:
    """``{(hand, seat): decisions}`` of stored rows, each decision judged from its options'
    values by :func:`engine.judge.judge` (as a fresh review is)."""
    d = table.to_pydict()
    n = table.num_rows

    def est(prefix: str, r: int, n_of: str) -> Estimate:
        return Estimate(d[f"{prefix}_mean"][r], d[f"{prefix}_low"][r], d[f"{prefix}_high"][r],
                        int(d[f"{n_of}_n"][r]))  # fmt: skip

    out: dict[tuple[int, int], list[DecisionReview]] = {}
    i = 0
    while i < n:
        j = i
        while j < n and d["hand_id"][j] == d["hand_id"][i] and d["step"][j] == d["step"][i]:
            j += 1
        values = tuple(
            OptionValue(int(d["action"][r]), est("delta", r, "delta"), est("win", r, "win"),
                        est("huang", r, "huang"), est("win_huxi", r, "win_huxi"))
            for r in range(i, j)
        )  # fmt: skip
        gains = tuple(Gain(est("gain_delta", r, "delta"), est("gain_win", r, "delta"))
                      for r in range(i, j))  # fmt: skip
        hand, seat = int(d["hand_id"][i]), int(d["seat"][i])
        played = int(d["played"][i])
        dec = judge(int(d["step"][i]), seat, str(d["phase"][i]), played, values, gains)
        out.setdefault((hand, seat), []).append(dec)
        i = j
    return out


def review_bytes(table: pa.Table) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(
        table, sink, compression="zstd", compression_level=3, use_dictionary=["phase"],
        row_group_size=max(1, table.num_rows),
    )  # fmt: skip
    return sink.getvalue()


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def review_entries(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return list(manifest.get(REVIEWS) or ())


def check_reviews(
    run_path: Path, entries: Sequence[dict[str, Any]], cache: Any
) -> tuple[list[dict[str, Any]], list[str]]:
    """The entries whose files pass the checks of every shard file (in the run folder, a
    regular file of the listed size, rows and SHA-256), and one line per damaged one."""
    from replay.store.scan import check_file

    good, bad = [], []
    for e in entries:
        try:
            check_file(run_path, e, cache, what="review shard file")
        except CorruptLog as err:
            bad.append(f"{err} (left out; its reviews are computed again)")
        else:
            good.append(e)
    return good, bad


class StoredReviews:
    """The stored reviews of one run under one key: what they cover and their decisions.
    Files are checked when first needed; a damaged one is named through ``warn`` once and
    left out (its pairs count as not reviewed)."""

    def __init__(
        self, run_path: Path, manifest: dict[str, Any], key: Key,
        warn: Callable[[str], None] | None = None,
    ) -> None:  # fmt: skip
        self.run_path = Path(run_path)
        self.key = key
        self.warn = warn
        self.entries = [e for e in review_entries(manifest) if key.of(e)]
        self.covers = [coverage_of(e) for e in self.entries]
        self._checked: dict[int, bool] = {}
        self._rows: dict[int, dict[tuple[int, int], list[DecisionReview]]] = {}

    def _ok(self, i: int) -> bool:
        if i not in self._checked:
            from replay.store.scan import ChecksumCache

            cache = ChecksumCache(self.run_path.parent.parent)
            good, bad = check_reviews(self.run_path, [self.entries[i]], cache)
            cache.save()
            self._checked[i] = bool(good)
            if bad and self.warn is not None:
                self.warn(bad[0])
        return self._checked[i]

    def mask(self, hand: int) -> int:
        """The seats of ``hand`` a good stored file holds (bit ``s`` for seat ``s``)."""
        m = 0
        for i, cov in enumerate(self.covers):
            if hand in cov and self._ok(i):
                m |= cov[hand]
        return m

    def decisions(self, hand: int, seats: Iterable[int]) -> list[DecisionReview]:
        """The stored decisions of ``seats`` of ``hand`` (each seat from the first good file
        holding it), in step order."""
        out: list[DecisionReview] = []
        for s in seats:
            for i, cov in enumerate(self.covers):
                if (cov.get(hand, 0) >> s) & 1 and self._ok(i):
                    out.extend(self._read(i).get((hand, s), []))
                    break
        return sorted(out, key=lambda d: d.step)

    def _read(self, i: int) -> dict[tuple[int, int], list[DecisionReview]]:
        if i not in self._rows:
            import pyarrow.parquet as pq

            from replay.store.scan import resolve_shard_path

            path = resolve_shard_path(self.run_path, self.entries[i]["path"])
            self._rows[i] = decisions_of(pq.read_table(path, schema=_schema()))
        return self._rows[i]


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    """What :func:`store` did: files written, (hand, seat) pairs stored, or why nothing."""

    files: int
    pairs: int
    note: str | None = None


def store(
    run_path: Path,
    key: Key,
    items: Sequence[tuple[int, int, Sequence[DecisionReview]]],
) -> Stored:
    """Store ``(hand, seat mask, decisions of those seats)`` under ``key``: new files of at
    most :data:`PART_HANDS` hands each, listed in the manifest, under the run's lock. Pairs
    a good file already holds (a review stored meanwhile) are not stored twice; a damaged
    file of the key whose every pair is then held again is replaced (delisted, removed). A run that is
    being written (its lock held) or a store that cannot be written stores nothing: the
    result says why, in one line."""
    import contextlib

    from replay.store.catalog import refresh_after_write
    from replay.store.files import atomic_write
    from replay.store.manifest import RunLock, now, read_manifest, write_manifest
    from replay.store.scan import ChecksumCache, resolve_shard_path

    run_path = Path(run_path)
    name = run_path.name.removeprefix("run=")
    if not items:
        return Stored(0, 0)
    try:
        with RunLock(run_path):
            manifest = read_manifest(run_path)
            entries = manifest.setdefault(REVIEWS, [])
            cache = ChecksumCache(run_path.parent.parent)
            good, _ = check_reviews(run_path, [e for e in entries if key.of(e)], cache)
            cache.save()
            damaged = [e for e in entries if key.of(e) and e not in good]
            held: dict[int, int] = {}
            for e in good:
                for h, bits in coverage_of(e).items():
                    held[h] = held.get(h, 0) | bits
            todo: dict[int, tuple[int, list[DecisionReview]]] = {}
            for hand, mask, decisions in items:
                new = mask & ~held.get(hand, 0)
                if new:
                    keep = [d for d in decisions if (new >> d.seat) & 1]
                    todo[hand] = (new, keep)
            if not todo:
                return Stored(0, 0)
            index = 1 + max(
                (int(g.group(1)) for e in entries if (g := _PART.match(str(e.get("path"))))),
                default=-1,
            )
            hands = sorted(todo)
            files = 0
            (run_path / REVIEWS).mkdir(exist_ok=True)
            for lo in range(0, len(hands), PART_HANDS):
                chunk = hands[lo : lo + PART_HANDS]
                table = table_of((h, todo[h][1]) for h in chunk)
                data = review_bytes(table)
                rel = part_path(index)
                atomic_write(run_path / rel, data)
                entries.append(
                    {
                        "path": rel, "rows": table.num_rows, "bytes": len(data),
                        "sha256": hashlib.sha256(data).hexdigest(), "version": VERSION,
                        "rollouts": key.rollouts, "rollout_policy": key.rollout_policy,
                        "seed": key.seed,
                        "hands": coverage_ranges({h: todo[h][0] for h in chunk}),
                    }
                )  # fmt: skip
                index += 1
                files += 1
            for h, (bits, _) in todo.items():
                held[h] = held.get(h, 0) | bits
            replaced = [e for e in damaged
                        if all(held.get(h, 0) & m == m for h, m in coverage_of(e).items())]  # fmt: skip
            manifest[REVIEWS] = [e for e in entries if e not in replaced]
            manifest["updated"] = now()
            write_manifest(run_path, manifest)
            for e in replaced:  # a damaged file whose every review is stored anew: replaced
                with contextlib.suppress(OSError, CorruptLog):
                    resolve_shard_path(run_path, e["path"]).unlink()
    except PaohuziError as e:  # the lock is held, the folder cannot be written, disk full
        return Stored(0, 0, f"the review is not stored ({' '.join(str(e).split())})")
    except OSError as e:
        return Stored(0, 0, f"the review is not stored (run {name}: {e.strerror or e})")
    refresh_after_write(run_path)
    return Stored(files, sum(bin(m).count("1") for m, _ in todo.values()))


# ---------------------------------------------------------------------------------------------
# A review that reads what is stored and stores what it computed
# ---------------------------------------------------------------------------------------------


def mask_of(seats: Iterable[int]) -> int:
    m = 0
    for s in seats:
        m |= 1 << s
    return m


def missing(stored: StoredReviews, hand: int, seats: Sequence[int]) -> list[int]:
    """The seats of ``hand`` no good stored file holds."""
    have = stored.mask(hand)
    return [s for s in seats if not (have >> s) & 1]


def merge(fresh: Any, seats: Sequence[int], stored: StoredReviews, hand: int) -> Any:
    """The review of ``seats`` of ``hand``: ``fresh`` (a HandReview of the missing seats)
    with the stored decisions of the others, in step order."""
    import dataclasses

    old = stored.decisions(hand, [s for s in seats if s not in fresh.seats])
    decisions = tuple(sorted([*old, *fresh.decisions], key=lambda d: d.step))
    return dataclasses.replace(fresh, seats=tuple(seats), decisions=decisions, stored=len(old))


def verify_reviews(run_path: Path, manifest: dict[str, Any], cache: Any) -> list[str]:
    """What ``paohuzi verify`` finds wrong with a run's stored reviews, one line each: a file
    failing the shard-file checks, listed twice, holding a row of a (hand, seat) its entry
    does not list, out of (hand, step) order, or listing a hand the run does not hold."""
    import pyarrow.parquet as pq

    from replay.store.scan import resolve_shard_path

    entries = review_entries(manifest)
    good, out = check_reviews(run_path, entries, cache)
    out = [line.replace(" (left out; its reviews are computed again)", "") for line in out]
    total = sum(int(s["hands"]) for s in manifest.get("shards") or ())
    seen: set[str] = set()
    for e in good:
        rel = str(e["path"])
        if rel in seen:
            out.append(f"review shard file {rel} is listed twice")
            continue
        seen.add(rel)
        cov = coverage_of(e)
        beyond = [h for h in cov if h >= total]
        if beyond:
            out.append(f"review shard file {rel} lists hand {beyond[0]}, the run holds {total:,}")
        t = pq.read_table(resolve_shard_path(run_path, rel), columns=["hand_id", "step", "seat"])
        hands, steps, seats = (t.column(c).to_pylist() for c in ("hand_id", "step", "seat"))
        last = (-1, -1)
        for h, k, s in zip(hands, steps, seats):
            if not (cov.get(h, 0) >> s) & 1:
                out.append(f"review shard file {rel} holds hand {h} seat {s}, not listed")
                break
            if (h, k) < last:
                out.append(f"review shard file {rel} is out of (hand, step) order at hand {h}")
                break
            last = (h, k)
    return out


def listed_paths(manifest: dict[str, Any]) -> set[str]:
    """The review files a manifest lists (``verify`` counts no other file of the folder)."""
    return {str(e.get("path")) for e in review_entries(manifest)}
