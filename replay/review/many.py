"""Reviewing many hands of a run on all cores (``paohuzi review RUN --sample K|--hands IDS``).

Each hand is reviewed as :func:`replay.review.hand.review_hand` reviews one, in the package's
process pool (:func:`replay.pool.process_pool`; workers forked from this process, its
kernels loaded, when that is safe, else spawned), with the same parameters; results come
back in hand order, so the output does not depend on the worker count. Which hands: the ids given
(:func:`parse_ids`, ``1,5,9-12``) or ``K`` drawn without replacement from the run's hand ids
by ``random.Random(seed)`` (:func:`sample_ids`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.errors import InvalidNotation

#: The most hands one command reviews (``--sample``/``--hands``); a bigger review is several.
MAX_HANDS = 100_000


def parse_ids(text: str) -> list[int]:
    """Hand ids of ``1,5,9-12`` (sorted, distinct); InvalidNotation with one line otherwise."""
    out: set[int] = set()
    for part in text.split(","):
        p = part.strip()
        lo, sep, hi = p.partition("-")
        try:
            a, b = (int(lo), int(hi)) if sep else (int(p), int(p))
        except ValueError:
            raise InvalidNotation(f"--hands {text[:60]!r}: {p!r} is no hand id or range") from None
        if a < 0 or b < a:
            raise InvalidNotation(f"--hands {text[:60]!r}: bad range {p!r}")
        if b - a + 1 + len(out) > MAX_HANDS:
            raise InvalidNotation(f"--hands {text[:60]!r}: more than {MAX_HANDS:,} hands")
        out.update(range(a, b + 1))
    return sorted(out)


def sample_ids(ranges: Sequence[tuple[int, int]], k: int, seed: int) -> list[int]:
    """``k`` distinct hand ids drawn from the inclusive ``ranges`` by ``Random(seed)``, sorted
    (all of them when the run has at most ``k``)."""
    total = sum(b - a + 1 for a, b in ranges)
    picks = range(total) if total <= k else random.Random(seed).sample(range(total), k)
    out = []
    for i in sorted(picks):
        for a, b in ranges:
            if i <= b - a:
                out.append(a + i)
                break
            i -= b - a + 1
    return out


def _review_one(args: tuple[Any, ...]) -> tuple[int, Any, list[str | None]]:
    """Worker: (hand id, its HandReview, the seats' policies)."""
    data, run, hand, seats, rollouts, rollout_policy, seed, engine = args
    from replay import store
    from replay.replayer.hand import load_hand
    from replay.review.hand import review_hand

    log = load_hand(store.open_store(data), run, hand)
    players = log.rules.players
    policies = [log.hand.get(f"policy_{s}") for s in range(players)]
    review = review_hand(log, [s for s in seats if s < players], rollouts, rollout_policy, seed,
                         engine)  # fmt: skip
    return hand, review, policies


def _worker_died() -> Exception:
    from engine.errors import PaohuziError

    return PaohuziError("a review worker process died (killed, or out of memory): run it again")


def review_hands(
    data: Path,
    run: str,
    hands: Sequence[int],
    seats: Sequence[int],
    rollouts: int,
    rollout_policy: str,
    seed: int,
    engine: str,
    workers: int,
    progress: Callable[[int, int], None] | None = None,
    seats_of: Mapping[int, Sequence[int]] | None = None,
    ray: Any = None,
) -> list[tuple[int, Any, list[str | None]]]:
    """``(hand, HandReview, policies)`` of each of ``hands``, in their order, reviewed by
    ``workers`` processes (1: in this process), or as Ray tasks when ``ray`` is an opened
    ``replay.record.ray_backend.RayBackend`` (``data`` then a path every node reaches);
    ``seats_of[hand]``, when given, the seats reviewed in that hand instead of ``seats``."""
    of = seats_of or {}
    jobs = [(data, run, h, tuple(of.get(h, seats)), rollouts, rollout_policy, seed, engine)
            for h in hands]  # fmt: skip
    if ray is not None:
        return _on_ray(ray, jobs, progress)
    out = []
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            out.append(_review_one(job))
            if progress is not None:
                progress(len(out), len(jobs))
        return out
    from replay.pool import process_pool, start_method

    method = start_method(fork=True)  # forked from a warm parent: ready in milliseconds
    if method == "fork" and engine != "reference":
        from engine.fast.warmup import warm_search

        warm_search()  # load the kernels here, once; the workers inherit them
    with process_pool(min(workers, len(jobs)), method, broken=_worker_died) as ex:
        for got in ex.map(_review_one, jobs):
            out.append(got)
            if progress is not None:
                progress(len(out), len(jobs))
    return out


#: Ray tasks in flight per CPU of the cluster (the results come back in hand order).
RAY_WINDOW = 4


def _on_ray(
    backend: Any, jobs: list[tuple[Any, ...]], progress: Callable[[int, int], None] | None
) -> list[tuple[int, Any, list[str | None]]]:
    """The jobs as Ray tasks (at most :data:`RAY_WINDOW` per CPU in flight), answers in job
    order: the same output as the process pool's."""
    import contextlib
    from collections import deque

    from engine.errors import PaohuziError

    ray = backend.module
    from ray.exceptions import RayError, RayTaskError

    task = ray.remote(_review_one).options(num_cpus=1, max_retries=3)
    window = RAY_WINDOW * backend.cpus()
    pending: deque[Any] = deque()
    out: list[tuple[int, Any, list[str | None]]] = []
    todo = iter(jobs)
    try:
        for job in todo:
            pending.append(task.remote(job))
            if len(pending) >= window:
                break
        while pending:
            ref = pending.popleft()
            try:
                out.append(ray.get(ref))
            except RayTaskError as e:
                cause = e.cause if e.cause is not None else e
                if isinstance(cause, PaohuziError):
                    raise PaohuziError(str(cause)) from None
                raise PaohuziError(
                    f"a Ray review task failed ({type(cause).__name__}: {cause})"
                ) from None
            except RayError as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise PaohuziError(f"a Ray review task failed ({first})") from None
            if progress is not None:
                progress(len(out), len(jobs))
            nxt = next(todo, None)
            if nxt is not None:
                pending.append(task.remote(nxt))
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
    return out
