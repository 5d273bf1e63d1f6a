"""``python -m replay.calculator bench|generate [N [SEED [SPELLING]]]``: the benchmark
(:func:`replay.calculator.bench.main`)."""

import sys

from replay.calculator.bench import main

sys.exit(main(sys.argv[1:]))
