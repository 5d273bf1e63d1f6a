"""Issue 59, risk 3: a negative ``--step`` out of range was reported as the step it had
been shifted to (``--step -50`` of a 10-step hand: "step -39 out of range"): the error
quotes the value typed, in the command line, at the interactive ``g`` prompt and in
:meth:`HandLog.check_step` itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.errors import PaohuziError
from paohuzi.cli.main import main
from replay.replayer.replay_file import read_replay_file

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "honghu-zimo.phz"


def test_step_error_quotes_typed_value_bug() -> None:
    log = read_replay_file(EXAMPLE).log
    assert log.n_steps == 10
    assert log.check_step(-11) == 0 and log.check_step(-1) == 10
    with pytest.raises(PaohuziError) as e:
        log.check_step(-50)
    assert "step -50 out of range" in str(e.value), e.value
    res = CliRunner().invoke(main, ["replay", "--file", str(EXAMPLE), "--step", "-50"])
    assert res.exit_code == 2 and "step -50 out of range" in res.output, res.output
    res = CliRunner().invoke(main, ["replay", "--file", str(EXAMPLE), "-i", "--no-color"],
                             input="g-12\nq")  # fmt: skip
    assert res.exit_code == 0 and "step -12 out of range" in res.output, res.output[-500:]
