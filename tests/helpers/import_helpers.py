"""What a ``paohuzi`` command imports: the top-level packages ``python -X importtime`` names
(the command line's and the reading commands' import tests)."""

from __future__ import annotations

import subprocess
import sys


def imported(*args: str) -> set[str]:
    """The top-level packages ``paohuzi ARGS`` imports."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "paohuzi.cli", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    names = set()
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names
