"""The bounds of one tuning run, in a module of their own so that ``paohuzi tune --help``
states them without importing the optimizer (numpy, pydantic)."""

from __future__ import annotations

#: Bounds of one tuning run (raised by nothing: a larger run is several runs).
MAX_DEALS = 1_000_000
MAX_GENERATIONS = 10_000
MAX_POPSIZE = 1_000
MAX_VALIDATION = 10_000_000
#: The fewest validation deals: the verdict rests on a normal 95 % interval of the per-deal
#: differences, which are skewed (rare big hands; skewness about ±2.5, excess kurtosis up to
#: 85 on 4,000 deals of hunan, luzhou and hunan-4p). Resampled from those deals, the interval
#: covered the true mean 80–93 % of the time at 20–30 deals, 92–97 % at 100, 93–96 % at 200.
MIN_VALIDATION = 200
