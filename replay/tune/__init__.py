"""``paohuzi tune``: the weights of ``greedy`` / ``heuristic`` tuned by CMA-ES over duplicate
self-play against a baseline (docs/TUNING.md).

* :mod:`replay.tune.space` — the tuned parameters as a vector: which ones, their scale and
  bounds, a vector back to a weights table;
* :mod:`replay.tune.duel` — one candidate against the baseline on common duplicate deals: the
  per-deal paired differences (exactly the hands ``simulate --duplicate`` records);
* :mod:`replay.tune.evaluate` — a generation's candidates on the process pool or Ray;
* :mod:`replay.tune.optimizer` — the CMA-ES loop, its JSON checkpoint (resume after Ctrl-C
  or a kill: the optimizer replayed from the recorded generations), bounds, the validation
  on fresh deals;
* :mod:`replay.tune.limits` — the bounds of a run (deals, generations, population, the fewest
  validation deals);
* :mod:`replay.tune.folder` — the folder a run writes into: new, empty, or one tune made (its
  marker); any other is refused before anything is written;
* :mod:`replay.tune.report` — the report: a table, an SVG plot of the fitness per generation.
"""
