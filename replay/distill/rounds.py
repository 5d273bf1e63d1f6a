"""The rounds of a distillation (expert iteration), its checkpoint and its resume.

A round ``r`` of ``paohuzi distill OUT``:

1. **teacher data** — the apprentice (the current ``learned`` table) plays ``hands`` hands
   of self-play, and the search values the options of a sample of its decisions with the
   apprentice as its rollout policy (:mod:`replay.distill.teacher`); chunks of
   ``chunk_hands`` hands, each a Parquet file ``OUT/data/round-R/chunk-C.parquet`` written
   once (a resumed run keeps the chunks it has);
2. **training** — the coefficients fitted to the data of every round so far
   (:mod:`replay.distill.train`), every :data:`HOLDOUT`-th chunk of each round held out; the
   held-out decisions of this round measure the apprentice before and after (agreement with
   the search's best option, regret);
3. **validation** — the new table in one seat, the baseline in the others, on
   ``validation_deals`` fresh duplicate deals of its own seed: the paired score difference per
   hand with its 95 % interval, exactly as ``paohuzi tune`` and ``paohuzi stats`` give it.

The next round's apprentice is this round's table. After the last round, the table of the
round with the best validation is played once more against the baseline on
``final_deals`` deals no round has seen (the result, ``OUT/learned.json``).

The checkpoint ``OUT/checkpoint.json`` holds the settings and every round's record (each
round's table in full), with a SHA-256 over them; it is written atomically after each step,
so a run killed at any moment goes on where it stopped, and gives the same tables and
figures as an uninterrupted one: each chunk, fit and duel is a pure function of the settings.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.deck import derive_seed
from engine.errors import PaohuziError
from engine.policies import weights as W
from engine.rules import RuleSet
from replay.distill import teacher as TD
from replay.distill import train as TR
from replay.store.files import atomic_write
from replay.tune import checkpoint_file
from replay.tune.duel import DealDiffs, Duel
from replay.tune.evaluate import Evaluator
from replay.tune.optimizer import verdict

CHECKPOINT = "checkpoint.json"
FORMAT = "paohuzi-distill-checkpoint"
VERSION = 1
RESULT = "learned.json"
DATA = "data"
#: Every HOLDOUT-th chunk of a round (chunk % HOLDOUT == HOLDOUT - 1) is held out of training.
HOLDOUT = 10
#: The largest checkpoint read (a round's record is about 3 KiB).
MAX_STATE_BYTES = 16 * 1024 * 1024
#: Bounds of the settings (raise them here; each is a flag of ``distill``).
MAX_ROUNDS = 100
MAX_HANDS = 10_000_000
MAX_CHUNK_HANDS = 10_000
MAX_ROLLOUTS = 4096
MIN_VALIDATION = 200
MAX_VALIDATION = 10_000_000
#: The largest teacher-data chunk read back (a chunk of 100 hands is about 200 KiB).
MAX_CHUNK_BYTES = 512 * 1024 * 1024


class DistillError(PaohuziError):
    """A distillation that cannot start or continue (one line)."""


@dataclass(frozen=True)
class Settings:
    """What determines a distillation's result (resuming needs the same)."""

    rules: RuleSet
    start: W.PolicyWeights
    baseline: str
    baseline_table: W.PolicyWeights | None
    rollouts: int
    seed: int
    rounds: int
    hands: int
    chunk_hands: int
    sample: float
    validation_deals: int
    final_deals: int
    session_length: int
    l2: float = 0.0
    #: How the report names the rules and the teacher; not identity.
    rules_label: str = ""

    def __post_init__(self) -> None:
        checks = [
            (1 <= self.rounds <= MAX_ROUNDS, f"--rounds {self.rounds}: 1 … {MAX_ROUNDS}"),
            (1 <= self.hands <= MAX_HANDS, f"--hands {self.hands}: 1 … {MAX_HANDS:,}"),
            (
                1 <= self.chunk_hands <= MAX_CHUNK_HANDS,
                f"--chunk-hands {self.chunk_hands}: 1 … {MAX_CHUNK_HANDS:,}",
            ),
            (
                1 <= self.rollouts <= MAX_ROLLOUTS,
                f"--teacher search@{self.rollouts}: 1 … {MAX_ROLLOUTS} rollouts",
            ),
            (0 < self.sample <= 1, f"--sample {self.sample}: above 0, at most 1"),
            (0 <= self.l2 <= 1e6, f"--l2 {self.l2}: 0 … 1e6"),
        ]
        for deals, flag in ((self.validation_deals, "--validation-deals"),
                            (self.final_deals, "--final-deals")):  # fmt: skip
            checks.append(
                (
                    MIN_VALIDATION <= deals <= MAX_VALIDATION,
                    f"{flag} {deals}: {MIN_VALIDATION} … {MAX_VALIDATION:,} (on fewer deals the"
                    " 95 % interval is not to be trusted)",
                )
            )
        chunks = -(-self.hands // self.chunk_hands)
        checks.append(
            (
                chunks >= HOLDOUT,
                f"--hands {self.hands} in chunks of --chunk-hands {self.chunk_hands}: {chunks}"
                f" chunks, fewer than {HOLDOUT} (one chunk in {HOLDOUT} is held out to measure"
                " each round)",
            )
        )
        for ok, message in checks:
            if not ok:
                raise DistillError(message)
        if self.start.policy != "learned":
            raise DistillError(f"the start table is a {self.start.policy} table, not a learned one")

    @property
    def chunks(self) -> int:
        return -(-self.hands // self.chunk_hands)

    def duel(self) -> Duel:
        return Duel(self.rules, self.baseline, self.baseline_table, self.session_length)

    def identity(self) -> dict[str, Any]:
        """The settings as JSON values (what a resumed run must match, key by key)."""
        return {
            "rules": self.rules.to_dict(),
            "start": self.start.as_dict(),
            "baseline": self.baseline,
            "baseline_weights": (
                None if self.baseline_table is None else self.baseline_table.as_dict()
            ),
            "teacher": f"search@{self.rollouts}",
            "seed": self.seed,
            "hands": self.hands,
            "chunk_hands": self.chunk_hands,
            "sample": self.sample,
            "validation_deals": self.validation_deals,
            "final_deals": self.final_deals,
            "session_length": self.session_length,
            "l2": self.l2,
        }


@dataclass
class Validation:
    """A table against the baseline on fresh duplicate deals."""

    seed: int
    deals: int
    score_ci: tuple[float, float, float]
    win_ci: tuple[float, float, float]
    seconds: float

    @property
    def verdict(self) -> str:
        return verdict(self.score_ci)

    @classmethod
    def of(cls, d: DealDiffs, seed: int, seconds: float) -> Validation:
        return cls(seed, d.deals, d.score_ci(), d.win_ci(), round(seconds, 3))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Validation:
        return cls(d["seed"], d["deals"], tuple(d["score_ci"]), tuple(d["win_ci"]), d["seconds"])


@dataclass
class Round:
    """One round's record: its data (decisions by kind, rows), the table it trained, the
    held-out decisions' agreement and regret before (the apprentice that made the data) and
    after, the validation, and the seconds each step took."""

    r: int
    decisions: dict[str, int]
    rows: int
    table: dict[str, float]
    before: dict[str, dict[str, float]]
    after: dict[str, dict[str, float]]
    validation: Validation
    seconds: dict[str, float]

    def weights(self) -> W.PolicyWeights:
        return W.weights_from_mapping(self.table, "learned", f"{CHECKPOINT} round {self.r}")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "validation": asdict(self.validation)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Round:
        return cls(**{**d, "validation": Validation.from_dict(d["validation"])})


@dataclass
class State:
    identity: dict[str, Any]
    rounds: list[Round] = field(default_factory=list)
    final: Validation | None = None
    best: int | None = None
    stop_reason: str = ""

    def best_round(self) -> Round | None:
        """The round whose table validated best (the highest mean; the first of equals)."""
        if not self.rounds:
            return None
        return max(self.rounds, key=lambda rd: (rd.validation.score_ci[0], -rd.r))


# ---------------------------------------------------------------------------------------------
# The checkpoint
# ---------------------------------------------------------------------------------------------


def save(out: Path, state: State) -> None:
    checkpoint_file.write(out / CHECKPOINT, FORMAT, VERSION, _body(state))


def _body(state: State) -> dict[str, Any]:
    return {
        "settings": state.identity,
        "rounds": [rd.to_dict() for rd in state.rounds],
        "final": None if state.final is None else asdict(state.final),
        "best": state.best,
        "stop_reason": state.stop_reason,
    }


def load(out: Path, settings: Settings) -> State | None:
    """The checkpoint in ``out`` for ``settings``, None if there is none; one line
    (:class:`DistillError`) if it is another file, damaged or of other settings."""
    from replay.distill.checkpoint_schema import problem

    path = out / CHECKPOINT
    doc = checkpoint_file.read(path, FORMAT, VERSION, MAX_STATE_BYTES, problem,
                               "distillation", "distill", DistillError)  # fmt: skip
    if doc is None:
        return None
    mine = settings.identity()
    for key in sorted(set(mine) | set(doc["settings"])):
        value = doc["settings"].get(key)
        if mine.get(key) != value or (key in mine) != (key in doc["settings"]):
            raise DistillError(
                f"{out}: a distillation with other settings ({key}: {_short(value)} there,"
                f" {_short(mine.get(key))} now); give the same options or another folder"
            )
    state = State(
        doc["settings"],
        [Round.from_dict(rd) for rd in doc["rounds"]],
        None if doc["final"] is None else Validation.from_dict(doc["final"]),
        doc["best"],
        doc["stop_reason"],
    )
    for rd in state.rounds:
        try:
            rd.weights()
        except PaohuziError as e:
            raise DistillError(f"{path}: {e} ({checkpoint_file.AGAIN})") from None
    return state


def _short(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 60 else f"{text[:57]}…"


# ---------------------------------------------------------------------------------------------
# Teacher data on disk
# ---------------------------------------------------------------------------------------------


def chunk_path(out: Path, r: int, c: int) -> Path:
    return out / DATA / f"round-{r:03d}" / f"chunk-{c:05d}.parquet"


def chunk_spec(settings: Settings, table: W.PolicyWeights, r: int, c: int) -> TD.ChunkSpec:
    hands = min(settings.chunk_hands, settings.hands - c * settings.chunk_hands)
    return TD.ChunkSpec(
        rules=settings.rules,
        table=table,
        rollout=table,
        rollouts=settings.rollouts,
        seed=derive_seed(settings.seed, "distill-round", r),
        chunk=c,
        hands=hands,
        chunk_size=settings.chunk_hands,
        sample=settings.sample,
    )


def ensure_chunks(
    out: Path,
    settings: Settings,
    table: W.PolicyWeights,
    r: int,
    evaluator: Evaluator,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Write the chunks of round ``r`` that are not on disk yet."""
    missing = [c for c in range(settings.chunks) if not chunk_path(out, r, c).is_file()]
    (out / DATA / f"round-{r:03d}").mkdir(parents=True, exist_ok=True)
    done = settings.chunks - len(missing)
    if progress is not None:
        progress(done, settings.chunks)
    args = [(chunk_spec(settings, table, r, c),) for c in missing]
    for c, tab in evaluator.imap(TD.chunk_table, args, missing):
        sink = pa.BufferOutputStream()
        pq.write_table(tab, sink, compression="zstd")
        atomic_write(chunk_path(out, r, c), sink.getvalue().to_pybytes())
        done += 1
        if progress is not None:
            progress(done, settings.chunks)


def read_round(
    out: Path, settings: Settings, table: W.PolicyWeights, r: int, held_out: bool
) -> pa.Table:
    """Round ``r``'s training chunks (``held_out`` False) or held-out ones, in chunk order,
    made by apprentice ``table``; each checked against the teacher data's schema, the digest
    of the chunk it must be and finite numbers (a file that fails is named)."""
    tables = []
    for c in range(settings.chunks):
        if (c % HOLDOUT == HOLDOUT - 1) != held_out:
            continue
        path = chunk_path(out, r, c)
        try:
            if os.path.getsize(path) > MAX_CHUNK_BYTES:
                raise DistillError(f"{path}: larger than {MAX_CHUNK_BYTES:,} bytes")
            tab = pq.read_table(path)
        except (OSError, pa.ArrowException) as e:
            raise DistillError(
                f"{path}: cannot read it ({str(e).splitlines()[0]}); remove it to make it again"
            ) from None
        again = "remove it to make it again"
        if not tab.schema.equals(TD.SCHEMA):
            raise DistillError(f"{path}: not teacher data of this version; {again}")
        meta = tab.schema.metadata or {}
        if meta.get(TD.DIGEST_KEY) != chunk_spec(settings, table, r, c).digest().encode():
            raise DistillError(f"{path}: teacher data of other settings; {again}")
        for name in ("value", "win", *TD.FEATURE_COLUMNS):
            col = tab.column(name).to_numpy(zero_copy_only=False)
            if not np.isfinite(col).all():
                raise DistillError(
                    f"{path}: column {name} holds a number that is not finite; {again}"
                )
        tables.append(tab.replace_schema_metadata(None))
    return pa.concat_tables(tables) if tables else TD.SCHEMA.empty_table()


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


@dataclass
class Hooks:
    """What the command shows while a run goes: a step starts (round, name), a step's
    progress (done, total), a round ends."""

    step: Callable[[int, str], None] | None = None
    progress: Callable[[int, int], None] | None = None
    round_done: Callable[[Round], None] | None = None


def distill(
    settings: Settings,
    out: Path,
    evaluator: Evaluator,
    max_minutes: float | None = None,
    hooks: Hooks | None = None,
    write_outputs: Callable[[State, Settings, Path], None] | None = None,
) -> State:
    """Run (or continue) the distillation in ``out``: its rounds, then the final validation;
    the state. ``max_minutes`` stops it between steps (the next run goes on)."""
    hooks = hooks or Hooks()
    state = load(out, settings)
    if state is None:
        state = State(settings.identity())
        save(out, state)
    t_start = time.monotonic()

    def out_of_time() -> bool:
        return max_minutes is not None and time.monotonic() - t_start > 60 * max_minutes

    table = state.rounds[-1].weights() if state.rounds else settings.start
    while len(state.rounds) < settings.rounds:
        r = len(state.rounds)
        if out_of_time():
            state.stop_reason = f"--max-minutes {max_minutes:g}"
            save(out, state)
            return state
        seconds: dict[str, float] = {}
        t0 = time.monotonic()
        if hooks.step:
            hooks.step(r, "teacher data")
        ensure_chunks(out, settings, table, r, evaluator, hooks.progress)
        seconds["data"] = round(time.monotonic() - t0, 3)
        if out_of_time():
            state.stop_reason = f"--max-minutes {max_minutes:g}"
            save(out, state)
            return state
        t0 = time.monotonic()
        if hooks.step:
            hooks.step(r, "training")
        # each round's data as its apprentice made it (an earlier chunk removed is made again)
        makers = [settings.start] + [rd.weights() for rd in state.rounds]
        for q in range(r):
            ensure_chunks(out, settings, makers[q], q, evaluator)
        rounds_data = [read_round(out, settings, makers[q], q, False) for q in range(r + 1)]
        train_data = pa.concat_tables(rounds_data)
        this_round = rounds_data[r]
        held = read_round(out, settings, table, r, True)
        new = TR.train(train_data, table, settings.l2)
        before = _assessed(TR.assess_table(held, table))
        after = _assessed(TR.assess_table(held, new))
        seconds["train"] = round(time.monotonic() - t0, 3)
        t0 = time.monotonic()
        if hooks.step:
            hooks.step(r, "validation")
        seed = derive_seed(settings.seed, "distill-validation", r)
        cb = _tasks(hooks, evaluator, new, seed, settings.validation_deals)
        (d,) = evaluator.run([new], seed, settings.validation_deals, cb)
        seconds["validation"] = round(time.monotonic() - t0, 3)
        rec = Round(
            r=r,
            decisions=_decision_counts(this_round, held),
            rows=this_round.num_rows + held.num_rows,
            table=new.as_dict(),
            before=before,
            after=after,
            validation=Validation.of(d, seed, seconds["validation"]),
            seconds=seconds,
        )
        state.rounds.append(rec)
        state.final = None
        state.best = None
        state.stop_reason = ""
        save(out, state)
        if write_outputs is not None:
            write_outputs(state, settings, out)
        if hooks.round_done:
            hooks.round_done(rec)
        table = new
    if state.final is None:
        best = state.best_round()
        assert best is not None
        if hooks.step:
            hooks.step(len(state.rounds), "final validation")
        seed = derive_seed(settings.seed, "distill-final", 0)
        t0 = time.monotonic()
        chosen = best.weights()
        cb = _tasks(hooks, evaluator, chosen, seed, settings.final_deals)
        (d,) = evaluator.run([chosen], seed, settings.final_deals, cb)
        state.final = Validation.of(d, seed, time.monotonic() - t0)
        state.best = best.r
        save(out, state)
    if write_outputs is not None:
        write_outputs(state, settings, out)
    return state


def _tasks(
    hooks: Hooks, evaluator: Evaluator, table: W.PolicyWeights, seed: int, deals: int
) -> Callable[[int], None] | None:
    if hooks.progress is None:
        return None
    total = evaluator.tasks(1, table, seed, deals)
    progress = hooks.progress
    return lambda done: progress(done, total)


def _assessed(a: dict[str, TR.Assessment]) -> dict[str, dict[str, float]]:
    return {
        k: {
            "decisions": v.decisions,
            "agreement": round(v.agreement, 6),
            "regret": round(v.regret, 6),
        }
        for k, v in a.items()
    }


def _decision_counts(*tables: pa.Table) -> dict[str, int]:
    out = {"discard": 0, "claim": 0}
    for kind, name in ((TR.L.DISCARD, "discard"), (TR.L.CLAIM, "claim")):
        for tab in tables:
            d = TR.Decisions.of(tab, kind, 1)
            out[name] += d.count
    return out
