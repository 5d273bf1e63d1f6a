"""Hands to import, checked: what ``paohuzi import`` (replay files, all or nothing;
``--jsonl``, a batch answered line by line), ``POST /runs/{run}/hands`` and ``paohuzi play``
bring in, before the store's writer commits it (:func:`replay.record.importing.import_hands`;
nothing here writes).

:class:`ImportBatch` verifies each item's hand (:func:`verified_rows`: re-applied through the
compiled engine's checked path, its outcome compared) and refuses what is no replay file,
what the rules do not allow, other rules than the run's, a hand already stored
(:func:`hand_key`); it gives the shard's two tables of the hands it accepts (re-applied by
the compiled verifier) and their provenance. :func:`provenance` reads where a run's hands
came from. The replay file itself (reading, writing, exporting) is
:mod:`replay.replayer.replay_file`.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from engine.errors import CorruptLog, PaohuziError
from engine.rules import RuleSet
from replay import schema, store
from replay.replayer.hand import game_for
from replay.replayer.replay_file import MAX_BYTES, ReplayFile, read_replay
from replay.replayer.replay_schema import ReplayFileError
from replay.replayer.verify import (
    FastState,
    check_log,
    check_tables,
    expected_event,
    expected_hand,
    fast_unsupported,
)
from replay.store.manifest import Manifest
from replay.store.provenance_schema import PROVENANCE, PROVENANCE_MAX_BYTES, PROVENANCE_SCHEMA

# ---------------------------------------------------------------------------------------------
# Runs of imported hands, and the hands they hold
# ---------------------------------------------------------------------------------------------


def default_run_name(rules: RuleSet) -> str:
    """``imported-<preset>``, or ``imported-<base preset>-<fingerprint>`` for rules that are
    no preset (a preset changed by ``set:`` lines)."""
    preset = rules.preset_name()
    if preset is not None:
        return f"imported-{preset}"
    return f"imported-{'luzhou' if rules.luzhou else 'hunan'}-{rules.fingerprint()[:8]}"


def _default_run(root: Path, rules: RuleSet) -> str:
    """The run a hand with ``rules`` is imported into by default: :func:`default_run_name`,
    unless a run of that name holds other hands (another rule set, or a simulated run):
    then ``<that name>-<fingerprint>``, so such a run never blocks the default."""
    first = default_run_name(rules)
    for name in (first, f"{first}-{rules.fingerprint()[:8]}"):
        path = store.run_dir(root, name)
        if not (path / store.MANIFEST_NAME).exists():
            return name
        try:
            m = store.read_manifest(path)
        except PaohuziError:
            continue
        if Manifest(m).imported and m.get("rules_fingerprint") == rules.fingerprint():
            return name
    return first  # both taken: import_files names the conflict


def hand_key(rules: RuleSet, deck: Sequence[int], dealer: int, events: Sequence[Any]) -> str:
    """What makes two hands the same hand: rules, deck, dealer and events (a digest)."""
    h = hashlib.sha256(rules.fingerprint().encode())
    h.update(bytes(deck))
    h.update(f"|{dealer}|".encode())
    h.update(",".join(f"{int(s)}:{int(a)}" for s, a in events).encode())
    return h.hexdigest()


#: The hand keys of shards read before, by the SHA-256s of their two files and the rules'
#: fingerprint: a listed shard file never changes, so each imported hand of the store is
#: hashed once per process (at most this many shards remembered, the least recently used
#: dropped).
_SHARD_KEYS: collections.OrderedDict[tuple[str, str, str], list[tuple[str, int]]] = (
    collections.OrderedDict()
)
_SHARD_KEYS_MAX = 4096
_SHARD_KEYS_LOCK = threading.Lock()


def _shard_keys(r: Any, shard: dict[str, Any], rules: RuleSet) -> list[tuple[str, int]]:
    """``(hand_key, hand_id)`` of every hand of one shard of run ``r`` (read checked)."""
    files = shard["files"]
    ck = (str(files["hands"]["sha256"]), str(files["events"]["sha256"]), rules.fingerprint())
    with _SHARD_KEYS_LOCK:
        hit = _SHARD_KEYS.get(ck)
        if hit is not None:
            _SHARD_KEYS.move_to_end(ck)
            return hit
    hands = r.read_shard(shard, "hands").select(["hand_id", "deck", "dealer", "n_events"])
    events = r.read_shard(shard, "events").select(["hand_id", "seat", "action"]).to_pydict()
    out: list[tuple[str, int]] = []
    i = 0
    for hid, deck, dealer, n in zip(*hands.to_pydict().values(), strict=True):
        if n and (events["hand_id"][i] != hid or events["hand_id"][i + n - 1] != hid):
            raise CorruptLog(f"run {r.name}: events of hand {hid} misplaced")
        history = zip(events["seat"][i : i + n], events["action"][i : i + n], strict=True)
        out.append((hand_key(rules, deck, dealer, list(history)), hid))
        i += n
    with _SHARD_KEYS_LOCK:
        _SHARD_KEYS[ck] = out
        while len(_SHARD_KEYS) > _SHARD_KEYS_MAX:
            _SHARD_KEYS.popitem(last=False)
    return out


def _imported_keys(root: Path, rules: RuleSet) -> dict[str, tuple[str, int]]:
    """The :func:`hand_key` of every hand of the store's imported runs with ``rules``:
    ``key -> (run, hand_id)``. Runs that cannot be read are skipped."""
    st = store.open_store(root)
    out: dict[str, tuple[str, int]] = {}
    fp = rules.fingerprint()
    for name in st.run_names():
        try:
            r = st.run(name)
            if not Manifest(r.manifest).imported:
                continue
            if r.manifest.get("rules_fingerprint") != fp:
                continue
            for shard in r.shards:
                for key, hid in _shard_keys(r, shard, rules):
                    out.setdefault(key, (name, hid))
        except (PaohuziError, KeyError, TypeError):
            continue
    return out


# ---------------------------------------------------------------------------------------------
# Verifying hands and deriving their rows
# ---------------------------------------------------------------------------------------------


def verified_rows(rf: ReplayFile) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The ``hands`` row and ``events`` columns of the file's hand (hand id 0), derived
    while its events are re-applied through the checked path of the compiled engine (the
    reference engine for rules the compiled tables do not cover), and checked against the
    outcome the file states. Raises :class:`ReplayFileError` (``reason`` ``illegal`` with
    the event at fault, or ``outcome_differs``)."""
    log = rf.log
    name = log.meta.get("source", "replay file")
    engine = "fast" if fast_unsupported(log.rules) is None else "reference"
    problems = check_log(log, compare=False, engine=engine)
    if problems:
        p = problems[0]
        where = f"event {p.seq}" if p.seq is not None else "the hand"
        raise ReplayFileError(f"{name}: {where}: {p.reason}", "illegal", p.seq)
    state: Any
    if engine == "fast":
        state = FastState(log.rules, log.deck, log.dealer)
        derive = state.expected_event
    else:
        state = game_for(log.rules).new_initial_state(log.deck, log.dealer)
        derive = functools.partial(expected_event, state)
    ev: dict[str, list[Any]] = {f.name: [] for f in schema.EVENTS_SCHEMA}
    for k, (seat, action) in enumerate(log.events):
        kind, card, from_seat, forced, n_legal, options = derive(seat, action)
        for c, v in (("hand_id", 0), ("seq", k), ("seat", seat), ("action", action),
                     ("kind", kind), ("card", card), ("from_seat", from_seat),
                     ("forced", bool(forced)), ("n_legal", n_legal), ("options", options)):  # fmt: skip
            ev[c].append(v)
        state.apply_checked(seat, action)
    exp = (
        state.expected_hand(log.n_steps) if engine == "fast" else expected_hand(state, log.n_steps)
    )
    diffs = [
        f"{k} {v!r} (replay gives {exp[k]!r})"
        for k, v in rf.outcome.items()
        if k in exp and exp[k] != v
    ]
    if diffs:
        raise ReplayFileError(
            f"{name}: the stated outcome differs: " + ", ".join(diffs), "outcome_differs"
        )
    row: dict[str, Any] = {
        "hand_id": 0,
        "session": rf.record.get("session"),
        "session_hand": rf.record.get("session_hand", 0),
        "rotation": rf.record.get("rotation", 0),
        "deal_id": rf.record.get("deal_id"),
        "dealer": log.dealer,
        "huang_streak": rf.record.get("huang_streak", 0),
        "deck": bytes(log.deck),
    }
    row.update(exp)
    n = log.rules.players
    for s_ in range(schema.MAX_SEATS):
        if s_ < n:
            p_ = rf.policies[s_] if rf.policies else None
            row[f"policy_{s_}"] = p_ or "import"
        else:
            row[f"policy_{s_}"] = None
    return row, ev


def _with_id(
    derived: tuple[dict[str, Any], dict[str, list[Any]]], hand_id: int
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """A hand's row and event columns under its hand id (``session`` and ``deal_id``
    default to it, as in a run of single hands)."""
    row, ev = derived
    row = dict(row, hand_id=hand_id)
    for c in ("session", "deal_id"):
        if row[c] is None:
            row[c] = hand_id
    return row, dict(ev, hand_id=[hand_id] * len(ev["hand_id"]))


# ---------------------------------------------------------------------------------------------
# Batches: JSON lines
# ---------------------------------------------------------------------------------------------

#: The limits of a JSON-lines batch (``paohuzi import --jsonl``, ``POST /runs/{run}/hands``;
#: docs/SERVICE.md): its bytes, its lines (replay files), the bytes of one line.
BATCH_BYTES = 64 << 20
BATCH_LINES = 10_000
LINE_BYTES = MAX_BYTES


@dataclasses.dataclass
class Parsed:
    """One item of an import, in input order: a replay file, or why it is none
    (``error``); ``line``: its line in a JSON-lines batch."""

    name: str
    file: ReplayFile | None = None
    error: ReplayFileError | None = None
    line: int | None = None


def parse_item(data: bytes | str, name: str, line: int | None = None) -> Parsed:
    """One replay file (either spelling) from bytes or text; a refusal, not an exception,
    when it is not one."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        return Parsed(name, error=ReplayFileError(f"{name}: not UTF-8 text"), line=line)
    try:
        return Parsed(name, read_replay(text, name), line=line)
    except ReplayFileError as e:
        return Parsed(name, error=e, line=line)


def parse_jsonl(
    data: bytes,
    name: str = "",
    max_lines: int = BATCH_LINES,
    line_bytes: int = LINE_BYTES,
    hint: str = "",
) -> list[Parsed]:
    """The replay files of a JSON-lines batch: each non-blank line one file in the JSON
    spelling, named ``NAME line N`` (``line N`` without a name). A line longer than
    ``line_bytes`` is refused (``too_long``; ``hint`` says how to raise the limit), as is a
    line that is no JSON object or no replay file (``malformed``, with the line or field at
    fault); the others are parsed. More than ``max_lines`` files refuse the whole batch:
    :class:`ReplayFileError`, before any is parsed. A byte-order mark before the first line
    is skipped, as :func:`read_replay` skips one before a file."""
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    count = sum(1 for raw in lines if raw.strip())
    if count > max_lines:
        raise ReplayFileError(
            f"{name + ': ' if name else ''}{count:,} replay files, more than the limit of"
            f" {max_lines:,} per batch{hint and f' ({hint})'}",
            "too_long",
        )
    out: list[Parsed] = []
    for no, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        label = f"{name} line {no}" if name else f"line {no}"
        if len(raw) > line_bytes:
            why = (f"{label}: {len(raw):,} bytes, longer than the limit of {line_bytes:,} for a"
                   f" replay file{hint and f' ({hint})'}")  # fmt: skip
            out.append(Parsed(label, error=ReplayFileError(why, "too_long"), line=no))
            continue
        if not raw.lstrip().startswith(b"{"):
            why = f"{label}: not a JSON object (one replay file in the JSON spelling per line)"
            out.append(Parsed(label, error=ReplayFileError(why), line=no))
            continue
        out.append(parse_item(raw.removesuffix(b"\r"), label, no))
    return out


# ---------------------------------------------------------------------------------------------
# Importing into the store
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Verdict:
    """What became of one item of an import: accepted as ``hand_id``, or refused for
    ``reason`` (:data:`~replay.replayer.replay_schema.REASONS`) with the one-line
    ``error`` and, for an illegal event, its index ``event``."""

    index: int
    name: str
    line: int | None = None
    hand_id: int | None = None
    reason: str | None = None
    error: str | None = None
    event: int | None = None

    @property
    def accepted(self) -> bool:
        return self.reason is None

    def to_dict(self) -> dict[str, Any]:
        """The verdict as ``paohuzi import --jsonl --json`` and the API answer it."""
        return {
            "index": self.index,
            "line": self.line,
            "status": "accepted" if self.accepted else "refused",
            "hand_id": self.hand_id,
            "reason": self.reason,
            "event": self.event,
            "error": self.error,
        }

    def refuse(self, e: ReplayFileError) -> None:
        self.reason, self.error, self.event = e.reason, " ".join(str(e).split()), e.event


@dataclasses.dataclass
class ImportResult:
    """The run written to (None when no hand got so far), one :class:`Verdict` per item in
    input order, the new shard (None when no hand was accepted)."""

    run: str | None
    verdicts: list[Verdict]
    shard: int | None = None
    path: Path | None = None
    #: why ``DATA/paohuzi.duckdb`` could not be refreshed (the hands are committed; the next
    #: reader rebuilds it), or None
    catalog_problem: str | None = None

    @property
    def hand_ids(self) -> list[int]:
        return [v.hand_id for v in self.verdicts if v.hand_id is not None]

    @property
    def accepted(self) -> int:
        return sum(v.accepted for v in self.verdicts)

    @property
    def refused(self) -> int:
        return len(self.verdicts) - self.accepted

    def to_dict(self) -> dict[str, Any]:
        """The answer of ``POST /runs/{run}/hands`` (and ``paohuzi import --jsonl --json``)."""
        return {
            "run": self.run,
            "accepted": self.accepted,
            "refused": self.refused,
            "shard": self.shard,
            "hands": [v.to_dict() for v in self.verdicts],
            "catalog_problem": self.catalog_problem,
        }


class ImportBatch:
    """The items of one import on their way to a shard (what
    :func:`replay.record.importing.import_hands` commits): verdicts, derived rows.
    ``all_or_nothing``: the first refusal stops the import (:meth:`raise_if_refused`;
    ``paohuzi import FILE…``). :class:`ReplayFileError` for no item at all."""

    def __init__(self, items: Sequence[Parsed | ReplayFile], all_or_nothing: bool = False) -> None:
        if not items:
            raise ReplayFileError("nothing to import")
        self.items = [
            it if isinstance(it, Parsed) else Parsed(str(it.log.meta.get("source")), it)
            for it in items
        ]
        self.verdicts = [Verdict(i, p.name, p.line) for i, p in enumerate(self.items)]
        self.derived: dict[int, tuple[dict[str, Any], dict[str, list[Any]]]] = {}
        self.all_or_nothing = all_or_nothing

    def verify(self) -> None:
        """Parse errors become refusals; every replay file is verified (outside any lock:
        the CPU work of an import)."""
        for i, p in enumerate(self.items):
            if p.error is not None:
                self.verdicts[i].refuse(p.error)
                continue
            assert p.file is not None
            try:
                self.derived[i] = verified_rows(p.file)
            except ReplayFileError as e:
                self.verdicts[i].refuse(e)
            except Exception as e:  # an engine failure refuses the hand, never the batch
                why = f"{p.name}: the engine failed on this hand ({type(e).__name__})"
                self.verdicts[i].refuse(ReplayFileError(why, "unverifiable"))

    def ok(self) -> list[int]:
        return [i for i in sorted(self.derived) if self.verdicts[i].accepted]

    def rules(self, i: int) -> RuleSet:
        f = self.items[i].file
        assert f is not None
        return f.log.rules

    def first_refusal(self) -> ReplayFileError | None:
        """The refusal ``paohuzi import FILE…`` reports: mixed rules first, duplicates last,
        else the first in input order."""
        bad = [v for v in self.verdicts if not v.accepted]
        if not bad:
            return None
        v = min(bad, key=lambda v: (v.reason == "duplicate", v.reason != "other_rules", v.index))
        return ReplayFileError(str(v.error), str(v.reason), v.event)

    def raise_if_refused(self) -> None:
        """All or nothing: raise :meth:`first_refusal`, if any (else nothing)."""
        if self.all_or_nothing:
            e = self.first_refusal()
            if e is not None:
                raise e

    def default_run(self, root: Path) -> str:
        """The run the batch goes into when none is named: that of its first good hand's
        rules (:func:`default_run_name`, unless the store holds another run of that name)."""
        return _default_run(root, self.rules(self.ok()[0]))

    def screen(
        self,
        root: Path,
        name: str,
        manifest: dict[str, Any] | None,
        allow_duplicate: bool,
        hint: str,
    ) -> RuleSet | None:
        """Check run ``name``, of ``manifest`` (None: a new run; a simulated run:
        :class:`ReplayFileError` for the whole batch) and refuse the hands with other rules
        than it holds (or, for a new run, than the first hand's) and those already stored in
        the store at ``root`` (unless ``allow_duplicate``; ``hint`` ends the refusal); the
        rules of the hands left, or None when none is."""
        manifest = check_target(manifest, name)
        ok = self.ok()
        if not ok:
            return None
        first = self.items[ok[0]].name
        fp = manifest.get("rules_fingerprint") if manifest else self.rules(ok[0]).fingerprint()
        for i in ok:
            if self.rules(i).fingerprint() == fp:
                continue
            if manifest:
                held = manifest.get("rules_preset") or manifest.get("rules_fingerprint")
                why = f"run {name!r} holds hands with other rules ({held}); import into another run"
            else:
                why = f"other rules than {first}; import them into different runs"
            self.verdicts[i].refuse(ReplayFileError(f"{self.items[i].name}: {why}", "other_rules"))
        ok = self.ok()
        if not ok:
            return None
        rules = self.rules(ok[0])
        if not allow_duplicate:
            seen = _imported_keys(root, rules)
            for i in self.ok():
                f = self.items[i].file
                assert f is not None
                log = f.log
                key = hand_key(log.rules, log.deck, log.dealer, log.events)
                where = seen.get(key)
                if where is not None:
                    what = f"run {where[0]} hand {where[1]}" if where[1] >= 0 else where[0]
                    why = (f"{self.items[i].name}: the same hand (rules, deck, dealer and events)"
                           f" is already imported as {what}{hint}")  # fmt: skip
                    self.verdicts[i].refuse(ReplayFileError(why, "duplicate"))
                else:
                    seen[key] = (self.items[i].name, -1)
        return rules if self.ok() else None

    def tables(self, name: str, rules: RuleSet, first: int) -> tuple[pa.Table, pa.Table]:
        """The shard's two tables of the hands still accepted, ids from ``first`` on,
        re-applied by the compiled verifier (:func:`~replay.replayer.verify.check_tables`,
        what ``paohuzi verify`` checks) before anything is written: a hand it flags is
        refused (``unverifiable``) and the tables are made again without it."""
        while True:
            ok = self.ok()
            hrows: list[dict[str, Any]] = []
            ecols: dict[str, list[Any]] = {f.name: [] for f in schema.EVENTS_SCHEMA}
            for j, i in enumerate(ok):
                row, ev = _with_id(self.derived[i], first + j)
                hrows.append(row)
                for c in ecols:
                    ecols[c] += ev[c]
            hands_t = pa.Table.from_pylist(hrows, schema=schema.HANDS_SCHEMA)
            events_t = pa.Table.from_pydict(ecols, schema=schema.EVENTS_SCHEMA)
            flagged = check_tables(name, rules, hands_t, events_t) if ok else {}
            if not flagged:
                for j, i in enumerate(ok):
                    self.verdicts[i].hand_id = first + j
                return hands_t, events_t
            for j, problems in flagged.items():
                i = ok[j]
                why = f"{self.items[i].name}: the verifier refuses the derived rows: {problems[0]}"
                self.verdicts[i].refuse(ReplayFileError(why, "unverifiable"))

    def provenance(self, origin: str | None) -> pa.Table:
        """The shard's provenance table (:data:`PROVENANCE_SCHEMA`) of the hands accepted:
        :meth:`origins`."""
        return pa.Table.from_pylist(self.origins(origin), schema=PROVENANCE_SCHEMA)

    def result(
        self, run: str | None, shard: int | None = None, path: Path | None = None
    ) -> ImportResult:
        """What the import did: into ``run`` (None when no hand got so far), its new shard
        and the run's folder (None when no hand was written)."""
        return ImportResult(run, self.verdicts, shard, path)

    def origins(self, origin: str | None) -> list[dict[str, Any]]:
        """The provenance rows of the hands accepted (:data:`PROVENANCE_SCHEMA`): each one's
        hand id, item name (after ``origin``, if given), title, ``source`` and the time."""
        at = datetime.now(UTC).isoformat(timespec="seconds")
        out = []
        for i in self.ok():
            item = self.items[i]
            rf = item.file
            assert rf is not None
            from_run, from_hand = _source(rf.source)
            out.append(
                {
                    "hand_id": self.verdicts[i].hand_id,
                    "file": f"{origin}: {item.name}" if origin else item.name,
                    "title": rf.title,
                    "from_run": from_run,
                    "from_hand": from_hand,
                    "at": at,
                }
            )
        return out


def _source(doc: Any) -> tuple[str | None, int | None]:
    """A replay file's ``source`` (``{"run", "hand_id"}``) as (run, hand id)."""
    if not isinstance(doc, dict):
        return None, None
    run, hand = doc.get("run"), doc.get("hand_id")
    return (
        None if run is None else str(run),
        hand if isinstance(hand, int) and not isinstance(hand, bool) else None,
    )


def provenance(run: Any) -> list[dict[str, Any]]:
    """Where each hand of the run of imported hands ``run`` (a :class:`~replay.store.runs.Run`)
    came from, in hand order: ``{hand_id, file, title, from, at}`` (``from``: the replay
    file's ``source``, ``{"run", "hand_id"}``, or None). Read from each shard's provenance
    file (its SHA-256 checked against the manifest: :class:`~engine.errors.CorruptLog`
    otherwise), and from the manifest's ``imported`` list for shards written before there
    were such files."""
    import pyarrow.parquet as pq

    from replay.store.files import read_regular

    out = [dict(e) for e in run.manifest.get("imported") or [] if isinstance(e, dict)]
    for shard in run.shards:
        entry = shard["files"].get(PROVENANCE)
        if entry is None:
            continue
        data = read_regular(run.path / entry["path"], PROVENANCE_MAX_BYTES)
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise CorruptLog(f"run {run.name}: {entry['path']} does not match its checksum")
        rows = pq.read_table(pa.BufferReader(data)).to_pylist()
        for r in rows:
            src = (
                None if r["from_run"] is None else {"run": r["from_run"], "hand_id": r["from_hand"]}
            )
            out.append({"hand_id": r["hand_id"], "file": r["file"], "title": r["title"],
                        "from": src, "at": r["at"]})  # fmt: skip
    return sorted(out, key=lambda e: e.get("hand_id") or 0)


def import_target(path: Path, name: str) -> dict[str, Any] | None:
    """The manifest of run ``name`` (folder ``path``) that imported hands would go into, or
    None for a new run; :class:`ReplayFileError` for a run of simulated hands, which takes
    none."""
    if not (path / store.MANIFEST_NAME).exists():
        return None
    return check_target(store.read_manifest(path), name)


def check_target(manifest: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    """``manifest``, of run ``name``, when imported hands may go into it (None: a new run);
    :class:`ReplayFileError` for a run of simulated hands, which takes none."""
    if manifest is not None and not Manifest(manifest).imported:
        raise ReplayFileError(f"run {name!r} is a simulated run; import into another run")
    return manifest
