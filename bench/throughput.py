"""``make bench``: throughput figures (measured, never asserted in tests), each engine beside
the other in the same run, since the machine is shared and noisy (the ratio is the figure).

* self-play hands/s per core, engine only, for ``random``, ``heuristic`` and ``greedy``:
  the compiled engine (``engine.fast``) and the reference (``engine``); each shipped tuned
  set ``heuristic@tuned-PRESET`` and learned set ``learned@PRESET`` beside ``heuristic`` on
  its preset (docs/TUNING.md, docs/DISTILL.md);
* search (:mod:`bench.search`): compiled rollouts/s from mid-hand states beside the
  self-play rates, and a ``search@16`` / ``search@64`` seat's hands/s and decisions/s;
* ``paohuzi score --batch`` lines/s, reference and compiled scorer on the same lines;
* recording: engine-only vs play-record-and-write CPU time on the same shards (overhead);
  the facts derivation's hands/s and the recording with and without it (``--only-facts``);
  ``simulate`` throughput with 1 and 2 workers for both engines, bytes on disk per hand, and
  the wall time and peak memory of ``paohuzi simulate --workers 2`` (1,000,000 hands with
  the compiled engine, 100,000 with the reference);
* replay: ``paohuzi verify`` hands/s with 1 and 2 workers on a simulated run (default
  1,000,000 hands, where the workers' start-up is a small part) beside the simulation of the
  same run, and ``verify --reference`` (the Python engine) on 5,000 hands; the time to open
  a store, find a random hand of a 1,000,000-hand run and rebuild its state at a random
  step (a bigger ``--seek-hands`` run is the verified run's shards copied under new ids,
  :func:`bench.dashboard.replicate_parallel`, so it is quick to make).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from engine.deck import derive_seed, shuffle_deck
from engine.play import play_to_end
from engine.policies import load_policies
from engine.rules import find_rules
from engine.state import Game
from replay.record.shard import play_shard
from replay.record.spec import RunSpec


def selfplay_rate(policy: str, hands: int, preset: str = "hunan", seed: int = 1) -> float:
    """Hands per second of self-play (decks are shuffled inside the timed loop)."""
    rules = find_rules(preset)
    game = Game(rules)
    policies = load_policies(policy, rules.players)
    start = time.perf_counter()
    for i in range(hands):
        hand_seed = derive_seed(seed, "bench", i)
        play_to_end(game, shuffle_deck(hand_seed), i % rules.players, policies, hand_seed)
    return hands / (time.perf_counter() - start)


def record_overhead(hands: int, policy: str = "random", seed: int = 1) -> tuple[float, float]:
    """(engine-only hands/s, play-and-record hands/s) in CPU time on the same hands; the
    recording includes building the Arrow tables, not writing them."""
    from replay.record.recorder import ShardRecorder

    rules = find_rules("hunan")
    game = Game(rules)
    policies = load_policies(policy, rules.players)
    names = (policy,) * rules.players
    decks = [shuffle_deck(derive_seed(seed, "deal", i)) for i in range(hands)]
    seeds = [derive_seed(seed, "hand", i) for i in range(hands)]
    best_engine = best_record = float("inf")
    for _ in range(2):  # best of two, against noise from other processes
        t = time.process_time()
        for i in range(hands):
            play_to_end(game, decks[i], i % 3, policies, seeds[i])
        best_engine = min(best_engine, time.process_time() - t)
        rec = ShardRecorder(rules)
        t = time.process_time()
        for i in range(hands):
            rec.play_hand(decks[i], i % 3, policies, names, seeds[i], hand_id=i, session=0,
                          session_hand=0, rotation=0, deal_id=i)  # fmt: skip
        rec.tables()
        best_record = min(best_record, time.process_time() - t)
    return hands / best_engine, hands / best_record


def fast_record_overhead(
    hands: int, policy: str = "random", rounds: int = 3
) -> tuple[float, float, float]:
    """The compiled engine: (engine-only hands/s, play-record-and-write hands/s, the same
    without the event summaries) in CPU time on the same shards (engine only = the session
    kernel with its seeds and decks; recording adds the Arrow tables, the Parquet files,
    their checksums and the summary, whose event kinds the third figure leaves out). Per
    shard the three alternate ``rounds`` times and the fastest of each counts, so a burst of
    other load on the machine lands on all sides or on none."""
    from unittest import mock

    from engine.fast.play import play_sessions
    from replay.record.fast_engine import warm_up

    spec = RunSpec(rules=find_rules("hunan"), policies=(policy,) * 3, seed=1,
                          deals=hands, shard_hands=10_000, engine="fast")  # fmt: skip
    warm_up(spec, say=False)
    engine_s = record_s = bare_s = 0.0
    no_events: Any = mock.patch(
        "replay.derived.summarize_events.summarize_events", lambda *a, **k: {}
    )
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "hands").mkdir()
        for i in range(spec.n_shards):
            best_e = best_r = best_b = float("inf")
            for _ in range(rounds):
                t = time.process_time()
                play_sessions(spec, spec.shard_sessions(i))
                best_e = min(best_e, time.process_time() - t)
                t = time.process_time()
                play_shard(spec, i, Path(d))
                best_r = min(best_r, time.process_time() - t)
                with no_events:
                    t = time.process_time()
                    play_shard(spec, i, Path(d))
                    best_b = min(best_b, time.process_time() - t)
            engine_s += best_e
            record_s += best_r
            bare_s += best_b
    n = spec.hands_total
    return n / engine_s, n / record_s, n / bare_s


def event_summary_points(policy: str = "random", rounds: int = 5) -> tuple[float, float]:
    """(engine-only CPU seconds, event-summary CPU seconds) of one 10,000-hand shard, the
    fastest of ``rounds`` each in turns: the event summaries' share of the recording cost
    measured directly (their points of overhead = 100 × the ratio), less noisy than the
    difference of two overheads on a busy machine."""
    from engine.fast.play import play_sessions
    from replay.derived.facts import shard_facts
    from replay.derived.summaries import spec_manifest
    from replay.derived.summarize_events import summarize_events
    from replay.record.fast_engine import play_shard_tables, warm_up

    spec = RunSpec(rules=find_rules("hunan"), policies=(policy,) * 3, seed=1,
                   deals=10_000, shard_hands=10_000, engine="fast")  # fmt: skip
    warm_up(spec, say=False)
    hands, events, rows = play_shard_tables(spec, spec.shard_sessions(0))
    facts = shard_facts(hands, events, spec.rules, rows)  # counted by the play loop
    manifest = spec_manifest(spec)
    engine_s = summary_s = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        play_sessions(spec, spec.shard_sessions(0))
        engine_s = min(engine_s, time.process_time() - t)
        t = time.process_time()
        summarize_events(hands, events, manifest, facts=facts)
        summary_s = min(summary_s, time.process_time() - t)
    return engine_s, summary_s


def facts_overhead(hands: int, policy: str = "random", rounds: int = 3) -> dict[str, float]:
    """The facts derivation (docs/LOG_FORMAT.md §12) on the compiled engine's shards, in CPU
    time: ``derive`` hands/s of :func:`replay.derived.facts.derive_facts` alone on a
    shard's tables (by replay: ``paohuzi index``, the reference engine), ``engine`` hands/s of
    the session kernel alone, and the play + record + write hands/s ``with`` the facts (counted
    by the play loop, the file written) and ``without`` them (the loop counting none,
    their file and summary rows left out), on the same shards. As in :func:`fast_record_overhead`, the
    sides alternate ``rounds`` times per shard and the fastest of each counts."""
    from contextlib import ExitStack
    from unittest import mock

    import pyarrow.parquet as pq

    from engine.fast import play
    from engine.fast.play import play_sessions
    from replay.derived.facts import derive_facts
    from replay.record.fast_engine import warm_up

    spec = RunSpec(rules=find_rules("hunan"), policies=(policy,) * 3, seed=1,
                   deals=hands, shard_hands=10_000, engine="fast")  # fmt: skip
    warm_up(spec, say=False)
    total = dict.fromkeys(("engine", "with", "without", "derive"), 0.0)
    real = play.play_sessions

    def play_no_facts(spec: Any, sessions: range, facts: bool = False) -> Any:
        events, hands = real(spec, sessions)
        return events, {**hands, "facts": None}  # the facts file and summary rows too

    class NoFacts:
        """The facts the event summaries read, all zero, from no table (their rows empty)."""

        def __init__(self, facts: Any, h: Any) -> None:
            import numpy as np

            self.popao = self.conflicts = np.zeros(h.n, np.int64)
            self.bipai = np.zeros((4, h.n), np.int64)
            self.groups: dict[str, Any] = {}

    def no_facts() -> ExitStack:
        stack = ExitStack()
        stack.enter_context(mock.patch.object(play, "play_sessions", play_no_facts))
        # no facts table (read when the shard is derived): the writer writes no facts file
        stack.enter_context(mock.patch("replay.derived.facts.shard_facts", lambda *a, **k: None))
        stack.enter_context(mock.patch("replay.derived.summarize_events.HandFacts", NoFacts))
        return stack

    with tempfile.TemporaryDirectory() as d:
        for i in range(spec.n_shards):
            best = dict.fromkeys(total, float("inf"))
            for _ in range(rounds):
                t = time.process_time()
                play_sessions(spec, spec.shard_sessions(i))
                best["engine"] = min(best["engine"], time.process_time() - t)
                t = time.process_time()
                entry = play_shard(spec, i, Path(d))
                best["with"] = min(best["with"], time.process_time() - t)
                with no_facts():
                    t = time.process_time()
                    play_shard(spec, i, Path(d))
                    best["without"] = min(best["without"], time.process_time() - t)
                h = pq.read_table(Path(d) / entry["files"]["hands"]["path"])
                e = pq.read_table(Path(d) / entry["files"]["events"]["path"])
                t = time.process_time()
                derive_facts(h, e, spec.rules)
                best["derive"] = min(best["derive"], time.process_time() - t)
            for k in total:
                total[k] += best[k]
    return {k: spec.hands_total / v for k, v in total.items()}


def print_facts_overhead(hands: int) -> None:
    """The "facts derivation" figure of ``make bench``."""
    for policy in ("random", "heuristic"):
        r = facts_overhead(hands, policy)
        print(
            f"facts derivation, {policy:<9}: {r['derive']:,.0f} hands/s CPU alone; play +"
            f" record + write {r['with']:,.0f} hands/s with facts, {r['without']:,.0f} without:"
            f" {100 * (r['without'] / r['with'] - 1):.1f}% more CPU per hand (engine only"
            f" {r['engine']:,.0f})"
        )


def selfplay_pair(policy: str, fast_hands: int, ref_hands: int) -> tuple[float, float]:
    """Engine-only hands/s per core of the compiled and the reference engine, same run."""
    from bench.engine import bench_fast, bench_ref

    rules = find_rules("hunan")
    fast = bench_fast(rules, fast_hands, policy)["hands_per_cpu_s"]
    return fast, bench_ref(rules, ref_hands, policy)[1]


def tuned_selfplay(hands: int, rounds: int = 3) -> list[tuple[str, str, float, float]]:
    """For each shipped tuned heuristic set ``tuned-PRESET`` and learned set ``PRESET``
    (docs/DISTILL.md): (set, preset, its compiled
    self-play hands/s per core, ``heuristic``'s) on that preset's rules, measured in turns in
    this run (the best of ``rounds`` each), so the ratio is fair on a busy machine."""
    from bench.engine import bench_fast
    from engine.policies.weights import shipped_names

    out = []
    sets = [(f"heuristic@{n}", n[len("tuned-") :]) for n in shipped_names("heuristic")
            if n.startswith("tuned-")]  # fmt: skip
    sets += [(f"learned@{n}", n) for n in shipped_names("learned")]  # distilled per preset
    for spec, preset in sets:
        rules = find_rules(preset)
        tuned = base = 0.0
        for _ in range(rounds):
            tuned = max(tuned, bench_fast(rules, hands, spec)["hands_per_cpu_s"])
            base = max(base, bench_fast(rules, hands, "heuristic")["hands_per_cpu_s"])
        out.append((spec, preset, tuned, base))
    return out


def simulate_rate(
    hands: int, workers: int, policy: str = "random", engine: str = "reference"
) -> tuple[float, float]:
    """(hands/s wall clock, bytes on disk per hand) of ``runner.simulate`` into a fresh store."""
    from replay.record import runner

    spec = RunSpec(rules=find_rules("hunan"), policies=(policy,) * 3, seed=1, deals=hands,
                          engine=engine)  # fmt: skip
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        res = runner.simulate(spec, Path(d), workers=workers)
        return res.played / (time.perf_counter() - t), res.bytes / res.hands


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def _memory(pid: int) -> tuple[int, int, int]:
    """(RSS, peak RSS = VmHWM, PSS) bytes of one process; zeros when it is gone."""
    rss = hwm = pss = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, hwm, pss


def peak_memory(hands: int, workers: int = 2, engine: str = "reference") -> dict[str, float]:
    """Run ``paohuzi simulate --hands N --workers W --engine E`` in a subprocess, its process
    tree sampled 4×/s: wall seconds, bytes on disk, and peak memory: ``tree`` (the summed
    RSS of all processes), ``parent`` (the command's own peak RSS), ``worker`` (the largest
    peak RSS of a worker process, VmHWM) and ``worker_pss`` (its largest proportional set
    size: shared pages, such as the libraries and the compiled engine, split between the
    processes that map them)."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-c", "from paohuzi.cli.main import main; main()", "simulate",
               "--hands", str(hands), "--workers", str(workers), "--data", d, "-q",
               "--engine", engine]  # fmt: skip
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        peak = {"tree": 0, "parent": 0, "worker": 0, "worker_pss": 0}
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.25):
                total = 0
                for p in _tree(proc.pid):
                    rss, hwm, pss = _memory(p)
                    total += rss
                    if p == proc.pid:
                        peak["parent"] = max(peak["parent"], hwm)
                    else:
                        peak["worker"] = max(peak["worker"], hwm)
                        peak["worker_pss"] = max(peak["worker_pss"], pss)
                peak["tree"] = max(peak["tree"], total)

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        rc = proc.wait()
        done.set()
        th.join()
        wall = time.perf_counter() - t
        if rc != 0:
            raise SystemExit(f"simulate failed with status {rc}")
        size = sum(p.stat().st_size for p in Path(d, "runs").rglob("*.parquet"))
    return {"wall": wall, "bytes": size, **{k: float(v) for k, v in peak.items()}}


def _cpu() -> float:
    """CPU seconds of this process and its finished children (worker pools)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def verify_vs_simulate(
    hands: int, root: Path, workers: tuple[int, ...] = (1, 2)
) -> tuple[tuple[float, float], dict[int, tuple[float, float]]]:
    """Simulate ``hands`` hands with 2 workers into ``root`` (run ``bench``), then verify the
    run with each worker count. ``((simulate hands/s, CPU s/1000 hands), {workers: (verify
    hands/s, CPU s/1000 hands)})``: wall clock, and CPU time summed over the processes
    (which other load on the machine disturbs less)."""
    from replay.record import runner
    from replay.replayer.verify import verify_store

    spec = RunSpec(
        rules=find_rules("hunan"), policies=("random",) * 3, seed=1, deals=hands, engine="fast"
    )  # the product's simulate: the compiled engine
    t, c = time.perf_counter(), _cpu()
    res = runner.simulate(spec, root, "bench", workers=2)
    sim = (res.played / (time.perf_counter() - t), 1000 * (_cpu() - c) / res.played)
    rates = {}
    for w in workers:
        t, c = time.perf_counter(), _cpu()
        rep = verify_store(root, ["bench"], workers=w)
        rates[w] = (rep.hands / (time.perf_counter() - t), 1000 * (_cpu() - c) / rep.hands)
        if not rep.ok:
            raise SystemExit(f"verify found problems in a fresh run: {rep.problems[0]}")
    return sim, rates


def reference_verify_figure(
    root: Path, rates: dict[int, tuple[float, float]], hands: int = 5_000
) -> None:
    """``verify --reference`` (the Python engine re-applies the hands) with 2 workers on the
    first ``hands`` hands' worth of a run simulated like ``bench`` (run ``bench-ref``),
    beside the compiled verifier's 2-worker figure of the same run (``rates``)."""
    from replay.record import runner
    from replay.replayer.verify import verify_store

    spec = RunSpec(
        rules=find_rules("hunan"), policies=("random",) * 3, seed=1, deals=hands, engine="fast"
    )
    runner.simulate(spec, root, "bench-ref", workers=2)
    t = time.perf_counter()
    rep = verify_store(root, ["bench-ref"], workers=2, engine="reference")
    ref = rep.hands / (time.perf_counter() - t)
    fast = rates.get(2, next(iter(rates.values())))[0]
    print(
        f"verify --reference, 2 workers: {ref:9.0f} hands/s  ({hands:,} hands; the compiled"
        f" verifier is {fast / ref:.0f}× faster)"
    )


def seek_times(root: Path, run: str, samples: int = 50, seed: int = 1) -> list[float]:
    """Seconds to open the store, find a random hand by id and rebuild its state at a
    random step (checked), each from scratch."""
    import random

    from replay.replayer.hand import load_hand, replay_hand
    from replay.store.runs import open_store

    n = open_store(root).run(run).n_hands
    rng = random.Random(seed)
    out = []
    for _ in range(samples):
        hand = rng.randrange(n)
        t = time.perf_counter()
        log = load_hand(open_store(root), run, hand)
        replay_hand(log, rng.randint(0, log.n_steps))
        out.append(time.perf_counter() - t)
    return out


def store_read_hand_times(root: Path, run: str, samples: int = 20, seed: int = 1) -> list[float]:
    """Seconds per ``Run.read_hand`` (the store's own reader, a filtered read), for comparison."""
    import random

    from replay.store.runs import open_store

    r = open_store(root).run(run)
    rng = random.Random(seed)
    out = []
    for _ in range(samples):
        t = time.perf_counter()
        r.read_hand(rng.randrange(r.n_hands))
        out.append(time.perf_counter() - t)
    return out


def replay_figures(verify_hands: int, seek_hands: int) -> None:
    """Print the verify and seek figures."""
    import statistics

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (sim, sim_cpu), rates = verify_vs_simulate(verify_hands, root)
        print(
            f"simulate {verify_hands:,} hands : {sim:9.0f} hands/s  (2 workers, wall clock;"
            f" {sim_cpu:.2f} CPU s per 1,000 hands)"
        )
        for w, (r, cpu) in rates.items():
            print(
                f"verify, {w} worker{'s' if w > 1 else ' '}    : {r:9.0f} hands/s  "
                f"({r / sim:.2f}× simulate with 2 workers; {cpu:.2f} CPU s per 1,000 hands,"
                f" {sim_cpu / cpu:.2f}× less than simulate; target ≥ 2×, aim 3×)"
            )
        reference_verify_figure(root, rates)
        run = "bench"
        if seek_hands > verify_hands:
            from bench.dashboard import replicate_parallel

            replicate_parallel(root, "bench", root, "big", seek_hands, workers=2)
            run = "big"
        all_times = seek_times(root, run, samples=201)
        times = sorted(all_times[1:])  # the first one also pays imports and engine tables
        q = statistics.quantiles(times, n=20)
        print(
            f"seek in {max(seek_hands, verify_hands):,} hands  : median"
            f" {1000 * statistics.median(times):.0f} ms, p95 {1000 * q[-1]:.0f} ms, max"
            f" {1000 * times[-1]:.0f} ms, first in the process {1000 * all_times[0]:.0f} ms"
            "  (open, find by id, rebuild a random step; target < 1 s)"
        )
        rh = store_read_hand_times(root, run)
        print(
            f"Run.read_hand        : median {1000 * statistics.median(rh):.0f} ms  (for comparison)"
        )


def print_recording_overhead(hands: int) -> None:
    """The compiled engine's recording overhead with and without the event summaries
    (:func:`fast_record_overhead`) and the event summaries' CPU beside the engine's
    (:func:`event_summary_points`), for ``random`` and ``heuristic`` seats."""
    for policy in ("random", "heuristic"):
        engine, recorded, bare = fast_record_overhead(hands, policy)
        with_ev, without = 100 * (engine / recorded - 1), 100 * (engine / bare - 1)
        print(
            f"fast, {policy:<9}: engine only {engine:,.0f} hands/s CPU, play + record + write"
            f" {recorded:,.0f}: recording overhead {with_ev:.1f}% (target ≤ 15%); without the"
            f" event summaries {bare:,.0f}, {without:.1f}%: they add {with_ev - without:+.1f}"
            " points (target ≤ 5)"
        )
        engine_s, summary_s = event_summary_points(policy)
        print(
            f"fast, {policy:<9}: event summaries of a 10,000-hand shard {1000 * summary_s:.0f} ms"
            f" CPU beside the engine's {1000 * engine_s:.0f} ms: {100 * summary_s / engine_s:.1f}"
            " points"
        )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.throughput", description=__doc__)
    p.add_argument("--hands", type=int, default=3000, help="hands per self-play figure")
    p.add_argument("--scored", type=int, default=100_000, help="hands for the score figure")
    p.add_argument("--recorded", type=int, default=3000, help="hands per recording figure")
    p.add_argument(
        "--peak-hands", type=int, default=100_000, help="hands of the memory run (0: skip)"
    )
    p.add_argument(
        "--verify-hands", type=int, default=1_000_000, help="hands of the verify run (0: skip)"
    )
    p.add_argument(
        "--seek-hands", type=int, default=1_000_000, help="hands of the run for seek timings"
    )
    p.add_argument("--fast-hands", type=int, default=20_000, help="hands per fast self-play figure")
    p.add_argument(
        "--fast-recorded", type=int, default=40_000, help="hands per fast recording figure"
    )
    p.add_argument(
        "--big-hands", type=int, default=1_000_000, help="hands of the fast engine's wall-clock run"
    )
    p.add_argument(
        "--search-hands", type=int, default=60, help="hands of the search@16 seat (0: skip)"
    )
    p.add_argument("--only-replay", action="store_true", help="only the replay figures")
    p.add_argument("--only-facts", action="store_true", help="only the facts derivation figure")
    p.add_argument(
        "--only-recording",
        action="store_true",
        help="only the compiled engine's recording overhead, with and without event summaries",
    )
    args = p.parse_args(argv)
    if args.only_replay:
        replay_figures(args.verify_hands, args.seek_hands)
        return
    if args.only_facts:
        print_facts_overhead(args.fast_recorded)
        return
    if args.only_recording:
        print_recording_overhead(args.fast_recorded)
        return
    from bench.calculator import bench_engines

    print("# engine only, hands/s per core (CPU time); compiled vs reference in this run")
    for policy, target in (("random", 10_000), ("heuristic", 3_000), ("greedy", 3_000)):
        fast, ref = selfplay_pair(policy, args.fast_hands, max(50, args.hands // 6))
        print(
            f"self-play {policy:<10}: fast {fast:9,.0f}  reference {ref:7,.0f}  "
            f"{fast / ref:5.1f}×  (target ≥ {target:,})"
        )
    for spec, preset, tuned, base in tuned_selfplay(args.fast_hands // 2):
        print(
            f"self-play {spec} ({preset}): fast {tuned:9,.0f}  heuristic {base:9,.0f}"
            f"  {tuned / base:5.2f}×  (target ≥ 0.90×"
            + (", ≥ 2,000 hands/s)" if spec.startswith("learned@") else ")")
        )
    if args.search_hands:
        from bench.search import figures as search_figures

        search_figures(40, 64, args.search_hands, args.fast_hands)
    rates = bench_engines(args.scored, 1)  # both engines, the same lines, this run
    ref, fast = rates["reference"], rates["fast"]
    print(
        f"score --batch        : fast {fast:9,.0f}  reference {ref:7,.0f}  {fast / ref:5.1f}×"
        "  lines/s (target ≥ 150,000)"
    )
    print_facts_overhead(args.fast_recorded)
    print_recording_overhead(args.fast_recorded)
    engine, recorded = record_overhead(args.recorded)
    print(
        f"reference: engine only {engine:,.0f} hands/s CPU, play + record {recorded:,.0f}:"
        f" recording overhead {100 * (engine / recorded - 1):.1f}% (tables only)"
    )
    for w in (1, 2):
        fast_rate, per_hand = simulate_rate(args.fast_recorded, w, engine="fast")
        ref_rate, _ = simulate_rate(args.recorded, w)
        print(
            f"simulate, {w} worker{'s' if w > 1 else ' '}  : fast {fast_rate:9,.0f}  reference"
            f" {ref_rate:7,.0f}  {fast_rate / ref_rate:5.1f}×  hands/s (wall clock)"
        )
    print(f"bytes on disk        : {per_hand:9.0f} bytes/hand  (all tables; target ≤ 300)")
    if args.peak_hands:
        gib = 1 << 30
        for engine_name, n in (("fast", args.big_hands), ("reference", args.peak_hands)):
            m = peak_memory(n, 2, engine_name)
            mib = {k: m[k] / 2**20 for k in ("tree", "parent", "worker", "worker_pss")}
            print(
                f"simulate --hands {n:,} --workers 2 --engine {engine_name}: {m['wall']:.0f} s,"
                f" {n / m['wall']:,.0f} hands/s, {m['bytes'] / n:.0f} bytes/hand; peak memory:"
                f" worker {mib['worker']:.0f} MiB RSS ({mib['worker_pss']:.0f} MiB PSS; target"
                f" ≤ 300), parent {mib['parent']:.0f} MiB, whole tree {mib['tree']:.0f} MiB"
                f" (< 1 GiB: {m['tree'] < gib})"
            )
    if args.verify_hands:
        replay_figures(args.verify_hands, args.seek_hands)


if __name__ == "__main__":
    main()
