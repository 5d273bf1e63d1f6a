"""The CMA-ES loop of ``paohuzi tune`` (the ``cma`` package), resumable and deterministic.

A tuning run lives in one folder ``OUT`` (:mod:`replay.tune.folder`: a new folder, or one
tune made, recognised by its marker):

* ``checkpoint.json`` — the checkpoint, rewritten atomically after every generation: the
  settings and every generation's record (each candidate's fitness, σ), the validation once
  done. It is plain JSON, which cannot run code when read: the optimizer is not stored but
  rebuilt on resume by replaying the recorded generations (the same ``ask``, then ``tell``
  of the recorded fitness; the optimizer's random stream is seeded from the run's seed), and
  every replayed generation must give its recorded σ exactly. A second run of the same
  command continues from it (after Ctrl-C, a kill or a time limit); other settings are
  refused by name; a checkpoint that fails its SHA-256, its schema or the replay is one line.
  An older tune's pickled ``state.pkl`` is never read.
* ``weights.json`` — the current result (the distribution's mean), a weights file
  (``heuristic@OUT/weights.json``), with what validated it;
* ``report.md``, ``report.json``, ``fitness.svg`` — :mod:`replay.tune.report`.

Generation ``g`` plays every candidate, and the current mean, against the baseline on the same
``deals`` duplicate deals of seed ``derive_seed(seed, "tune-generation", g)``; a candidate's
fitness is its mean paired score difference per hand (:mod:`replay.tune.duel`), maximised.
The validation plays the final mean on ``validation_deals`` deals of ``derive_seed(seed,
"tune-validation", 0)`` — deals no generation saw, at least :data:`MIN_VALIDATION` of them —
and calls the result better only when the whole 95 % interval is above 0.

Same settings, same seed: the same generations, weights and report bytes (the wall times in
the report excepted), for any worker count or backend, interrupted or not.
"""

from __future__ import annotations

import functools
import json
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

from engine.deck import derive_seed
from engine.errors import PaohuziError
from engine.policies import weights as W
from engine.rules import RuleSet
from replay.tune import checkpoint_file
from replay.tune.duel import Duel
from replay.tune.evaluate import Evaluator
from replay.tune.limits import (
    MAX_DEALS,
    MAX_GENERATIONS,
    MAX_POPSIZE,
    MAX_VALIDATION,
    MIN_VALIDATION,
)
from replay.tune.space import Space

#: The checkpoint: its file, its ``format`` and ``version``.
CHECKPOINT = "checkpoint.json"
FORMAT = "paohuzi-tune-checkpoint"
VERSION = 2
#: The checkpoint of an older ``tune`` (a pickle): never read, refused by name.
OLD_STATE = "state.pkl"
WEIGHTS = "weights.json"
#: The largest checkpoint read (10,000 generations of 13 candidates: a few MiB; of 1,000:
#: about 200 MiB).
MAX_STATE_BYTES = 256 * 1024 * 1024


class TuneError(PaohuziError):
    """A tuning run that cannot start or continue (one line)."""


@dataclass(frozen=True)
class Settings:
    """What determines a tuning run's result (resuming needs the same)."""

    rules: RuleSet
    policy: str
    baseline: str
    baseline_table: W.PolicyWeights | None
    start: W.PolicyWeights
    params: tuple[str, ...]
    seed: int
    deals: int
    popsize: int
    sigma0: float
    validation_deals: int
    session_length: int
    #: How the report names the rules (``hunan``, ``hunan --set min_huxi=10``); not identity.
    rules_label: str = ""

    def __post_init__(self) -> None:
        if not 1 <= self.deals <= MAX_DEALS:
            raise TuneError(f"--deals {self.deals}: 1 … {MAX_DEALS:,}")
        if not 2 <= self.popsize <= MAX_POPSIZE:
            raise TuneError(f"--popsize {self.popsize}: 2 … {MAX_POPSIZE:,}")
        if not MIN_VALIDATION <= self.validation_deals <= MAX_VALIDATION:
            raise TuneError(
                f"--validation-deals {self.validation_deals}: {MIN_VALIDATION} … {MAX_VALIDATION:,}"
                f" (on fewer than {MIN_VALIDATION} deals the 95 % interval of the verdict is not"
                " to be trusted)"
            )
        if not 0 < self.sigma0 <= 10:
            raise TuneError(f"--sigma0 {self.sigma0}: above 0, at most 10")

    def space(self) -> Space:
        return Space.of(self.policy, self.start, self.params)

    def duel(self) -> Duel:
        return Duel(self.rules, self.baseline, self.baseline_table, self.session_length)

    def identity(self) -> dict[str, Any]:
        """The settings as JSON values (what a resumed run must match, key by key)."""
        return {
            "rules": self.rules.to_dict(),
            "policy": self.policy,
            "baseline": self.baseline,
            "baseline_weights": (
                None if self.baseline_table is None else self.baseline_table.as_dict()
            ),
            "start": self.start.as_dict(),
            "params": list(self.params),
            "seed": self.seed,
            "deals": self.deals,
            "popsize": self.popsize,
            "sigma0": self.sigma0,
            "validation_deals": self.validation_deals,
            "session_length": self.session_length,
        }


@dataclass
class Generation:
    """One generation's record: every candidate's fitness (paired score difference per hand
    against the baseline) and the current mean's, with 95 % intervals."""

    g: int
    seed: int
    fitness: list[float]
    best: int
    best_ci: tuple[float, float, float]
    mean_ci: tuple[float, float, float]
    mean_win_ci: tuple[float, float, float]
    sigma: float
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Generation:
        return cls(**{**d, **{k: tuple(d[k]) for k in ("best_ci", "mean_ci", "mean_win_ci")}})


def verdict(score_ci: tuple[float, float, float]) -> str:
    """``better`` (the interval above 0), ``worse`` (below) or ``not shown different``."""
    _, lo, hi = score_ci
    if lo > 0:
        return "better"
    if hi < 0:
        return "worse"
    return "not shown different"


@dataclass
class Validation:
    """The final mean against the baseline on fresh deals."""

    generations: int
    seed: int
    deals: int
    score_ci: tuple[float, float, float]
    win_ci: tuple[float, float, float]
    seconds: float

    @property
    def verdict(self) -> str:
        return verdict(self.score_ci)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Validation:
        d = {k: v for k, v in d.items() if k != "verdict"}
        return cls(**{**d, "score_ci": tuple(d["score_ci"]), "win_ci": tuple(d["win_ci"])})


@dataclass
class State:
    """A run: its settings (as the checkpoint holds them), the optimizer, every generation's
    record, and the validation once done. The checkpoint stores all but the optimizer, which
    :func:`load` rebuilds from the records."""

    identity: dict[str, Any]
    es: Any
    history: list[Generation] = field(default_factory=list)
    validation: Validation | None = None
    stop_reason: str = ""

    def table(self, space: Space) -> W.PolicyWeights:
        """The current result: the optimizer's mean as a table."""
        return space.table(list(self.es.result.xfavorite))


class Normal:
    """The optimizer's standard normal samples from its own generator, seeded from the run's
    seed: the optimizer replayed on resume draws what the uninterrupted one did."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.RandomState(seed % 2**32)

    def __call__(self, *shape: int) -> np.ndarray:
        return self.rng.standard_normal(shape)


def _cma() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "could not import matplotlib": cma's plots, unused
        import cma
    return cma


def new_state(settings: Settings) -> State:
    cma = _cma()
    space = settings.space()
    lo, hi = space.bounds
    opts = {
        "popsize": settings.popsize,
        "bounds": [lo, hi],
        "randn": Normal(derive_seed(settings.seed, "tune-cma", 0)),
        "seed": None,
        "verbose": -9,
        "verb_log": 0,
        "verb_disp": 0,
        "maxiter": MAX_GENERATIONS,
        "tolfun": 0,
        "tolfunhist": 0,
        "tolflatfitness": MAX_GENERATIONS,
        "tolstagnation": MAX_GENERATIONS,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        es = cma.CMAEvolutionStrategy(space.x0, settings.sigma0, opts)
    return State(settings.identity(), es)


# ---------------------------------------------------------------------------------------------
# The checkpoint
# ---------------------------------------------------------------------------------------------


def save(out: Path, state: State) -> None:
    """Write the checkpoint atomically (a temporary file, fsync, rename)."""
    checkpoint_file.write(out / CHECKPOINT, FORMAT, VERSION, _body(state))


def _body(state: State) -> dict[str, Any]:
    """What the checkpoint holds (and its SHA-256 covers)."""
    return {
        "cma": str(_cma().__version__),
        "settings": state.identity,
        "generations": [g.to_dict() for g in state.history],
        "validation": None if state.validation is None else asdict(state.validation),
        "stop_reason": state.stop_reason,
    }


_digest = checkpoint_file.digest


def load(out: Path, settings: Settings) -> State | None:
    """The checkpoint in ``out`` resumed for ``settings`` (the optimizer replayed from its
    generations), None if there is none; one line (:class:`TuneError`) if it is another file,
    damaged, of other settings or of an older tune (``state.pkl``: never read)."""
    old = out / OLD_STATE
    if os.path.lexists(old):
        raise TuneError(
            f"{old}: the checkpoint of an older paohuzi tune, a pickle, which is never read"
            " (a forged one would run code): tune into a new folder"
        )
    path = out / CHECKPOINT
    again = checkpoint_file.AGAIN
    doc = checkpoint_file.read(path, FORMAT, VERSION, MAX_STATE_BYTES, _schema_problem,
                               "tuning", "tune", TuneError)  # fmt: skip
    if doc is None:
        return None
    check_same(doc["settings"], settings, out)
    state = State(
        doc["settings"],
        None,
        [Generation.from_dict(g) for g in doc["generations"]],
        None if doc["validation"] is None else Validation.from_dict(doc["validation"]),
        doc["stop_reason"],
    )
    state.es = _replay(state, settings, f"{path}: {{}} ({again}, or tune into a new folder)",
                       doc["cma"])  # fmt: skip
    return state


def saved_generations(out: Path) -> int:
    """How many generations the checkpoint in ``out`` holds (0 if none or unreadable): what
    an interrupted run reports, without replaying them."""
    from replay.store.files import read_regular

    try:
        doc = json.loads(read_regular(out / CHECKPOINT, MAX_STATE_BYTES).decode("utf-8"))
        return len(doc["generations"])
    except Exception:  # nothing to report
        return 0


def _replay(state: State, settings: Settings, message: str, cma_version: str) -> Any:
    """The optimizer after the recorded generations: a new one, then every generation's
    ``stop``, ``ask`` and ``tell`` of its recorded fitness, as :func:`tune` did; each must give
    the recorded σ exactly (else the checkpoint is damaged or another cma computed it)."""
    es = new_state(settings).es
    now = str(_cma().__version__)
    other = f"; it was written with cma {cma_version}, this is {now}" if cma_version != now else ""
    for i, rec in enumerate(state.history):
        if rec.g != i or rec.seed != derive_seed(settings.seed, "tune-generation", i):
            raise TuneError(message.format(f"generation {i} is numbered or seeded otherwise"))
        if len(rec.fitness) != settings.popsize or rec.best != int(np.argmax(rec.fitness)):
            raise TuneError(message.format(f"generation {i} has another population or best"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if es.stop():
                raise TuneError(message.format(f"the optimizer had stopped before generation {i}"))
            xs = es.ask()
            es.tell(xs, [-f for f in rec.fitness])
        if float(es.sigma) != rec.sigma:
            raise TuneError(
                message.format(
                    f"generation {i} does not replay to its recorded σ ({rec.sigma!r}, replayed"
                    f" {float(es.sigma)!r}){other}"
                )
            )
    v = state.validation
    if v is not None and (
        v.generations > len(state.history)
        or v.seed != derive_seed(settings.seed, "tune-validation", 0)
        or v.deals != settings.validation_deals
    ):
        raise TuneError(message.format("its validation is not of this run"))
    return es


def _float_list(min_length: int, max_length: int) -> cs.CoreSchema:
    return cs.list_schema(
        cs.float_schema(strict=True), min_length=min_length, max_length=max_length, strict=True
    )


def _fields(fields: dict[str, cs.CoreSchema]) -> cs.CoreSchema:
    return cs.typed_dict_schema(
        {k: cs.typed_dict_field(v) for k, v in fields.items()}, extra_behavior="forbid",
        strict=True,
    )  # fmt: skip


def _count(hi: int) -> cs.CoreSchema:
    return cs.int_schema(ge=0, le=hi, strict=True)


_CI = _float_list(3, 3)
_SEED = _count(2**64 - 1)
_GENERATION = _fields({
    "g": _count(MAX_GENERATIONS), "seed": _SEED, "fitness": _float_list(2, MAX_POPSIZE),
    "best": _count(MAX_POPSIZE), "best_ci": _CI, "mean_ci": _CI, "mean_win_ci": _CI,
    "sigma": cs.float_schema(strict=True), "seconds": cs.float_schema(strict=True),
})  # fmt: skip
_VALIDATION = _fields({
    "generations": _count(MAX_GENERATIONS), "seed": _SEED, "deals": _count(MAX_VALIDATION),
    "score_ci": _CI, "win_ci": _CI, "seconds": cs.float_schema(strict=True),
})  # fmt: skip
CHECKPOINT_SCHEMA = _fields({
    "format": cs.literal_schema([FORMAT]),
    "version": cs.literal_schema([VERSION]),
    "sha256": cs.str_schema(pattern=r"^[0-9a-f]{64}$", strict=True),
    "cma": cs.str_schema(max_length=40, strict=True),
    "settings": cs.dict_schema(cs.str_schema(strict=True), cs.any_schema(), strict=True),
    "generations": cs.list_schema(_GENERATION, max_length=MAX_GENERATIONS, strict=True),
    "validation": cs.nullable_schema(_VALIDATION),
    "stop_reason": cs.str_schema(max_length=400, strict=True),
})  # fmt: skip


@functools.cache
def _validator() -> SchemaValidator:
    return SchemaValidator(CHECKPOINT_SCHEMA)


def _schema_problem(doc: dict[str, Any]) -> str | None:
    """The first fault of a checkpoint document against the schema, or None."""
    try:
        _validator().validate_python(doc)
    except ValidationError as e:
        return _problem(e)
    return None


_problem = checkpoint_file.first_fault


def check_same(identity: dict[str, Any], settings: Settings, out: Path) -> None:
    """Refuse to resume with other settings, naming the first that differs."""
    now = json.loads(json.dumps(settings.identity()))  # as the checkpoint holds it
    for key in [*now, *(k for k in identity if k not in now)]:
        was = identity.get(key)
        if now.get(key) != was:
            shown = {
                "rules": "--rules/--set", "baseline_weights": "--baseline's weights",
                "start": "--start's weights", "validation_deals": "--validation-deals",
                "session_length": "--session-length",
            }.get(key, f"--{key}")  # fmt: skip
            raise TuneError(
                f"{out} holds a tuning run with another {shown} ({_short(was)}, not"
                f" {_short(now.get(key))}): give another folder, or the same options"
            )


def _short(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "…"


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


@dataclass
class Budget:
    """Where the loop stops: ``generations`` in all (a resumed run counts the earlier ones),
    or after ``max_minutes`` of this invocation (checked between generations)."""

    generations: int
    max_minutes: float | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.generations <= MAX_GENERATIONS:
            raise TuneError(f"--generations {self.generations}: 1 … {MAX_GENERATIONS:,}")
        if self.max_minutes is not None and not self.max_minutes > 0:
            raise TuneError(f"--max-minutes {self.max_minutes}: above 0")


def tune(
    settings: Settings,
    budget: Budget,
    out: Path,
    evaluator: Evaluator,
    on_generation: Callable[[Generation], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    write_outputs: Callable[[State, Settings, Path], None] | None = None,
    state: State | None = None,
) -> State:
    """Run (or continue) the tuning run in ``out`` to the budget, then validate; the state.
    ``state``: the checkpoint the caller has loaded already (else it is loaded here)."""
    if state is None:
        state = load(out, settings)
    if state is None:
        state = new_state(settings)
        save(out, state)
    space = settings.space()
    t_start = time.monotonic()
    es = state.es
    stopped_by = ""
    while len(state.history) < budget.generations:
        if budget.max_minutes is not None and time.monotonic() - t_start > 60 * budget.max_minutes:
            stopped_by = f"--max-minutes {budget.max_minutes:g}"
            break
        if es.stop():
            stopped_by = "the optimizer (" + ", ".join(sorted(es.stop())) + ")"
            break
        g = len(state.history)
        t0 = time.monotonic()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            xs = es.ask()
        tables = [space.table(list(x)) for x in xs] + [state.table(space)]
        seed = derive_seed(settings.seed, "tune-generation", g)
        total = evaluator.tasks(len(tables), tables[0], seed, settings.deals)
        cb = None if progress is None else (lambda done, t=total: progress(done, t))
        diffs = evaluator.run(tables, seed, settings.deals, cb)
        fit = [d.score_ci()[0] for d in diffs[:-1]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            es.tell(xs, [-f for f in fit])  # cma minimises
        best = int(np.argmax(fit))
        rec = Generation(
            g=g,
            seed=seed,
            fitness=fit,
            best=best,
            best_ci=diffs[best].score_ci(),
            mean_ci=diffs[-1].score_ci(),
            mean_win_ci=diffs[-1].win_ci(),
            sigma=float(es.sigma),
            seconds=round(time.monotonic() - t0, 3),
        )
        state.history.append(rec)
        state.validation = None
        state.stop_reason = ""
        save(out, state)
        if write_outputs is not None:
            write_outputs(state, settings, out)
        if on_generation is not None:
            on_generation(rec)
    if stopped_by:
        state.stop_reason = stopped_by
    done = len(state.history)
    if state.validation is None or state.validation.generations != done:
        state.validation = validate(settings, state.table(space), evaluator, done, progress)
        save(out, state)
    if write_outputs is not None:
        write_outputs(state, settings, out)
    return state


def validate(
    settings: Settings,
    table: W.PolicyWeights,
    evaluator: Evaluator,
    generations: int,
    progress: Callable[[int, int], None] | None = None,
) -> Validation:
    """``table`` against the baseline on ``validation_deals`` fresh deals."""
    t0 = time.monotonic()
    seed = derive_seed(settings.seed, "tune-validation", 0)
    total = evaluator.tasks(1, table, seed, settings.validation_deals)
    cb = None if progress is None else (lambda done: progress(done, total))
    (d,) = evaluator.run([table], seed, settings.validation_deals, cb)
    return Validation(
        generations, seed, d.deals, d.score_ci(), d.win_ci(), round(time.monotonic() - t0, 3)
    )
