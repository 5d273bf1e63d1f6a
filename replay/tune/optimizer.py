"""The CMA-ES loop of ``paohuzi tune`` (the ``cma`` package), resumable and deterministic.

A tuning run lives in one folder ``OUT``:

* ``state.pkl`` — the checkpoint, rewritten atomically after every generation: the settings,
  the optimizer (its random stream inside it) and every generation's record. A second run of
  the same command continues from it (after Ctrl-C, a kill or a time limit); other settings
  are refused by name. It is a pickle with a SHA-256 of itself: a damaged one is one line;
  never resume from a checkpoint you did not write.
* ``weights.json`` — the current result (the distribution's mean), a weights file
  (``heuristic@OUT/weights.json``), with what validated it;
* ``report.md``, ``report.json``, ``fitness.svg`` — :mod:`replay.tune.report`.

Generation ``g`` plays every candidate, and the current mean, against the baseline on the same
``deals`` duplicate deals of seed ``derive_seed(seed, "tune-generation", g)``; a candidate's
fitness is its mean paired score difference per hand (:mod:`replay.tune.duel`), maximised.
The validation plays the final mean on ``validation_deals`` deals of ``derive_seed(seed,
"tune-validation", 0)`` — deals no generation saw — and calls the result better only when the
whole 95 % interval is above 0.

Same settings, same seed: the same generations, weights and report bytes (the wall times in
the report excepted), for any worker count or backend, interrupted or not.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.deck import derive_seed
from engine.errors import PaohuziError
from engine.policies import weights as W
from engine.rules import RuleSet
from replay.store.files import atomic_write
from replay.tune.duel import Duel
from replay.tune.evaluate import Evaluator
from replay.tune.space import Space

FORMAT = 1
STATE = "state.pkl"
WEIGHTS = "weights.json"
_MAGIC = b"paohuzi-tune-state 1\n"
#: Bounds of one tuning run (raised by nothing: a larger run is several runs).
MAX_DEALS = 1_000_000
MAX_GENERATIONS = 10_000
MAX_POPSIZE = 1_000
MAX_VALIDATION = 10_000_000
#: The largest checkpoint read (a 10,000-generation run's is a few MiB).
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
        if not 1 <= self.validation_deals <= MAX_VALIDATION:
            raise TuneError(f"--validation-deals {self.validation_deals}: 1 … {MAX_VALIDATION:,}")
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
        """``better`` (the interval above 0), ``worse`` (below) or ``not shown different``."""
        _, lo, hi = self.score_ci
        if lo > 0:
            return "better"
        if hi < 0:
            return "worse"
        return "not shown different"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict}


@dataclass
class State:
    """The checkpoint: settings, optimizer, history, and the validation once done."""

    identity: dict[str, Any]
    es: Any
    history: list[Generation] = field(default_factory=list)
    validation: Validation | None = None
    stop_reason: str = ""
    format: int = FORMAT

    def table(self, space: Space) -> W.PolicyWeights:
        """The current result: the optimizer's mean as a table."""
        return space.table(list(self.es.result.xfavorite))


class Normal:
    """The optimizer's standard normal samples from its own generator (pickled with it, so a
    resumed run draws what an uninterrupted one would have)."""

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
    payload = pickle.dumps(state, protocol=4)
    digest = hashlib.sha256(payload).hexdigest().encode()
    atomic_write(out / STATE, _MAGIC + digest + b"\n" + payload)


def load(out: Path) -> State | None:
    """The checkpoint in ``out``, None if there is none; one line if it is damaged."""
    from replay.store.files import NotRegularFile, read_regular

    path = out / STATE
    where = f"{path}"
    try:
        data = read_regular(path, MAX_STATE_BYTES)
    except FileNotFoundError:
        return None
    except NotRegularFile as e:
        raise TuneError(f"{where}: {str(e).removeprefix(f'{path} ')}") from None
    except OSError as e:
        raise TuneError(f"{where}: cannot read it ({e.strerror or e})") from None
    head, _, rest = data.partition(b"\n")
    digest, _, payload = rest.partition(b"\n")
    if head + b"\n" != _MAGIC:
        raise TuneError(f"{where}: not a tuning checkpoint (remove it to start again)")
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        raise TuneError(f"{where}: damaged (its checksum differs; remove it to start again)")
    try:
        state = pickle.loads(payload)
    except Exception as e:  # written by another version of the package
        raise TuneError(f"{where}: cannot be read ({type(e).__name__}: {e})") from None
    if not isinstance(state, State) or getattr(state, "format", None) != FORMAT:
        raise TuneError(f"{where}: a checkpoint of another format (remove it to start again)")
    return state


def check_same(state: State, settings: Settings, out: Path) -> None:
    """Refuse to resume with other settings, naming the first that differs."""
    now = settings.identity()
    for key, was in state.identity.items():
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
) -> State:
    """Run (or continue) the tuning run in ``out`` to the budget, then validate; the state."""
    state = load(out)
    if state is None:
        state = new_state(settings)
        save(out, state)
    else:
        check_same(state, settings, out)
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
