"""``make bench``: throughput figures on one core (measured, never asserted in tests).

* self-play hands/s with the ``random`` and ``heuristic`` policies (engine only, no recording);
* ``paohuzi score --batch`` hands/s, reference and compiled engines on the same lines;
* recording: engine-only vs play-and-record CPU time on the same hands (overhead, target
  ≤ 25%), ``simulate`` throughput with 1 and 2 workers, bytes on disk per hand (target
  ≤ 300), and the peak memory of a 100,000-hand ``paohuzi simulate --workers 2`` (target
  < 1 GiB, the largest process and the whole process tree).
* replay: ``paohuzi verify`` hands/s with 1 and 2 workers on a simulated run (default
  100,000 hands) beside the simulation of the same run; the time to open a store, find a
  random hand of a 1,000,000-hand run and rebuild its state at a random step (the big run
  is the verified run's shards copied under new hand ids, so it is quick to make).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from engine.deck import derive_seed, shuffle_deck
from engine.play import play_to_end
from engine.policies import load_policies
from engine.rules import find_rules
from engine.state import Game


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


def simulate_rate(hands: int, workers: int, policy: str = "random") -> tuple[float, float]:
    """(hands/s wall clock, bytes on disk per hand) of ``runner.simulate`` into a fresh store."""
    from replay.record import runner

    spec = runner.RunSpec(rules=find_rules("hunan"), policies=(policy,) * 3, seed=1, deals=hands)
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        res = runner.simulate(spec, Path(d), workers=workers)
        return res.played / (time.perf_counter() - t), res.bytes / res.hands


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def peak_memory(hands: int, workers: int = 2) -> tuple[float, int, int, float]:
    """Run ``paohuzi simulate --hands N --workers W`` in a subprocess: (wall seconds, bytes on
    disk, peak RSS of the largest process, peak RSS of the process tree sampled 4×/s)."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-c", "from replay.cli.main import main; main()", "simulate",
               "--hands", str(hands), "--workers", str(workers), "--data", d, "-q"]  # fmt: skip
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        peak_tree = 0
        done = threading.Event()

        def sample() -> None:
            nonlocal peak_tree
            while not done.wait(0.25):
                peak_tree = max(peak_tree, _tree_rss(proc.pid))

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        rc = proc.wait()
        done.set()
        th.join()
        wall = time.perf_counter() - t
        if rc != 0:
            raise SystemExit(f"simulate failed with status {rc}")
        size = sum(p.stat().st_size for p in Path(d, "runs").rglob("*.parquet"))
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return wall, largest, peak_tree, size


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

    spec = runner.RunSpec(rules=find_rules("hunan"), policies=("random",) * 3, seed=1, deals=hands)
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


def replicate_run(root: Path, src: str, dst: str, hands: int) -> None:
    """A run ``dst`` of ``hands`` hands made of copies of run ``src``'s shards under new hand
    ids (a large store for lookup timings without simulating it)."""
    import copy
    import json

    import pyarrow as pa
    import pyarrow.compute as pc

    from replay import store

    run = store.open_store(root).run(src)
    path = store.run_dir(root, dst)
    path.mkdir(parents=True, exist_ok=True)
    manifest = copy.deepcopy(run.manifest)
    manifest["run"], manifest["shards"] = dst, []
    first, index = 0, 0
    while first < hands:
        for shard in run.shards:
            if first >= hands:
                break
            n = min(shard["hands"], hands - first)
            offset = first - shard["first_hand"]
            tables = {}
            for name in ("hands", "events"):
                t = run.read_shard(shard, name)
                if name == "hands":
                    t = t.slice(0, n)
                else:
                    t = t.filter(pc.less(t["hand_id"], shard["first_hand"] + n))
                col = pc.add(t["hand_id"], pa.scalar(offset, pa.int64())).cast(pa.uint32())
                tables[name] = t.set_column(0, t.schema.field(0), col)
            files = {k: store.write_shard_file(path, v, k, index) for k, v in tables.items()}
            manifest["shards"].append(
                {**shard, "index": index, "first_hand": first, "hands": n,
                 "events": tables["events"].num_rows, "files": files}
            )  # fmt: skip
            first += n
            index += 1
    manifest["progress"] = {
        "shards": index,
        "hands": first,
        "events": sum(s["events"] for s in manifest["shards"]),
        "bytes": sum(f["bytes"] for s in manifest["shards"] for f in s["files"].values()),
    }
    manifest["params"]["hands_total"] = manifest["params"]["deals"] = first
    (path / store.MANIFEST_NAME).write_text(json.dumps(manifest, ensure_ascii=False))


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
                f" {sim_cpu / cpu:.2f}× less than simulate; target ≥ 1×)"
            )
        run = "bench"
        if seek_hands > verify_hands:
            replicate_run(root, "bench", "big", seek_hands)
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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m replay.bench", description=__doc__)
    p.add_argument("--hands", type=int, default=3000, help="hands per self-play figure")
    p.add_argument("--scored", type=int, default=100_000, help="hands for the score figure")
    p.add_argument("--recorded", type=int, default=3000, help="hands per recording figure")
    p.add_argument(
        "--peak-hands", type=int, default=100_000, help="hands of the memory run (0: skip)"
    )
    p.add_argument(
        "--verify-hands", type=int, default=100_000, help="hands of the verify run (0: skip)"
    )
    p.add_argument(
        "--seek-hands", type=int, default=1_000_000, help="hands of the run for seek timings"
    )
    p.add_argument("--only-replay", action="store_true", help="only the replay figures")
    args = p.parse_args(argv)
    if args.only_replay:
        replay_figures(args.verify_hands, args.seek_hands)
        return
    from replay.calculator import bench_engines

    print(
        f"self-play random     : {selfplay_rate('random', args.hands):9.0f} hands/s  (target ≥ 1,000)"
    )
    print(
        f"self-play heuristic  : {selfplay_rate('heuristic', args.hands // 3):9.0f} hands/s  (target ≥ 300)"
    )
    rates = bench_engines(args.scored, 1)  # both engines, the same lines, this run
    ref, fast = rates["reference"], rates["fast"]
    print(f"score --batch        : {ref:9.0f} hands/s  reference (target ≥ 50,000)")
    print(
        f"score --batch fast   : {fast:9.0f} hands/s  {fast / ref:.1f}× the reference"
        " (target ≥ 150,000)"
    )
    engine, recorded = record_overhead(args.recorded)
    print(f"engine only (CPU)    : {engine:9.0f} hands/s  (random policies)")
    print(
        f"play + record (CPU)  : {recorded:9.0f} hands/s  overhead"
        f" {100 * (engine / recorded - 1):5.1f}%  (target ≤ 25%)"
    )
    for w in (1, 2):
        rate, per_hand = simulate_rate(args.recorded, w)
        print(f"simulate, {w} worker{'s' if w > 1 else ' '}  : {rate:9.0f} hands/s  (wall clock)")
    print(f"bytes on disk        : {per_hand:9.0f} bytes/hand  (both tables; target ≤ 300)")
    if args.peak_hands:
        wall, largest, tree, size = peak_memory(args.peak_hands, 2)
        gib = 1 << 30
        print(
            f"simulate {args.peak_hands:,} hands, 2 workers: {wall:.0f} s,"
            f" {args.peak_hands / wall:.0f} hands/s, {size / args.peak_hands:.0f} bytes/hand,"
            f" peak RSS {largest / 2**20:.0f} MiB largest process,"
            f" {tree / 2**20:.0f} MiB process tree (target < 1 GiB: {max(largest, tree) < gib})"
        )
    if args.verify_hands:
        replay_figures(args.verify_hands, args.seek_hands)


if __name__ == "__main__":
    main()
