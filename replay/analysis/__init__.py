"""Statistics of recorded runs: :mod:`~replay.analysis.stats` (the numbers behind
``paohuzi stats``), :mod:`~replay.analysis.intervals` (confidence intervals, tests) and
:mod:`~replay.analysis.exact` (exact deal probabilities by counting)."""
