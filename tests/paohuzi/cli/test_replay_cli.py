"""``paohuzi replay --interactive`` without a terminal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from paohuzi.cli.main import main


def test_interactive_without_a_terminal_is_one_line_bug(tmp_path: Path) -> None:
    # With no terminal to read keys from, `replay -i` ended in an OSError traceback.
    r = CliRunner().invoke(
        main, ["simulate", "-n", "8", "--seed", "1", "-q", "-w", "1", "--data", str(tmp_path),
               "--run", "x"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    p = subprocess.run(
        [sys.executable, "-m", "paohuzi.cli", "replay", "x", "3", "--interactive", "--data",
         str(tmp_path)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300,
        start_new_session=True,  # no controlling terminal: /dev/tty cannot be opened
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert p.stderr == (
        "Error: --interactive needs a terminal to read keys from; use --step N or --all\n"
    )
