"""The benchmarks, all of them here: run from the checkout's root as ``python -m bench.NAME``
(``make bench``, ``make bench-dashboard``). Each reports speeds as ratios to a baseline measured
in the same run.

* :mod:`bench.throughput` — ``make bench``: recording, both engines, the store, ``stats``,
  the calculator, memory;
* :mod:`bench.dashboard` — ``make bench-dashboard``: every dashboard page and ``paohuzi
  stats`` on a store of 10⁷ (or 10⁸) hands, summaries against raw hands;
* :mod:`bench.service` — ``make bench-service``: ``paohuzi serve`` under concurrent clients
  (``/stats`` on 10⁷ hands, a hands page, an ndjson export, verified import);
* :mod:`bench.pages` — every page's render time, in AppTest or in Chromium;
* :mod:`bench.engine` — the compiled engine against the reference, hands per second;
* :mod:`bench.hu_kernel` — the compiled hu search against the reference's, on recorded calls;
* :mod:`bench.calculator` — ``paohuzi score --batch``, both engines, three spellings.
"""
