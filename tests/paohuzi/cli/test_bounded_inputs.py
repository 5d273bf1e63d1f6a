"""Every input is bounded (issue 10): replay files are read up to --max-bytes (1 MiB by
default) and never more, /dev/zero and FIFOs included; ``score --batch`` reads line by line
with a cap per line (--max-line-bytes). Over the limit: one ``Error:`` line, exit 2 (a
``--batch`` line over its cap is answered by an error line instead, issue 20)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.replayer import replay_file
from replay.replayer.replay_file import MAX_BYTES, ReplayFileError

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "honghu-zimo.phz"
GOOD_LINE = '{"hand": "壹贰叁柒捌玖六七八九九", "melds": ["pao:伍", "peng:三", "chi:二,七,十"]}'
AS_LIMIT = 2 << 30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run_limited(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess under a 2 GiB address-space limit (the timeout is only a safety
    net: the commands end in about a second)."""
    return subprocess.run(
        [sys.executable, "-m", "paohuzi.cli", *args],
        preexec_fn=_limit_memory,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def one_error(stderr: str, *needles: str) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    for n in needles:
        assert n in lines[0], stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize(
    "args",
    [
        ("replay", "--file", "/dev/zero"),
        ("import", "/dev/zero"),
        ("score", "--batch", "/dev/zero"),
    ],
    ids=["replay", "import", "score-batch"],
)
def test_dev_zero_fails_under_a_2_gib_limit(args: tuple[str, ...], tmp_path: Path) -> None:
    res = run_limited(*args, *(["--data", str(tmp_path / "store")] if args[0] == "import" else []))
    assert res.returncode == 2, res.stderr
    one_error(res.stderr, "/dev/zero", "limit")
    assert "MemoryError" not in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "store" / "runs").exists() or not any(
        (tmp_path / "store" / "runs").iterdir()
    )


def test_the_cap_and_the_flag_that_raises_it(tmp_path: Path) -> None:
    size = EXAMPLE.stat().st_size
    assert size < MAX_BYTES // 100  # a hand is a few KB
    with pytest.raises(ReplayFileError, match=f"larger than {size - 1:,} bytes"):
        replay_file.read_replay_file(EXAMPLE, size - 1)
    assert replay_file.read_replay_file(EXAMPLE, size).log.n_steps > 0
    big = tmp_path / "big.phz"
    big.write_text(EXAMPLE.read_text(encoding="utf-8") + "#" * MAX_BYTES, encoding="utf-8")
    r = CliRunner()
    res = r.invoke(main, ["replay", "--file", str(big)])
    assert res.exit_code == 2
    one_error(res.stderr, "big.phz", "--max-bytes")
    res = r.invoke(main, ["replay", "--file", str(big), "--max-bytes", str(2 * MAX_BYTES)])
    assert res.exit_code == 0, res.output
    data = str(tmp_path / "store")
    res = r.invoke(main, ["import", str(big), "--data", data])
    assert res.exit_code == 2 and not (tmp_path / "store").exists()
    one_error(res.stderr, "--max-bytes")
    res = r.invoke(main, ["import", str(big), "--data", data, "--max-bytes", str(2 * MAX_BYTES)])
    assert res.exit_code == 0, res.output
    res = r.invoke(main, ["replay", "--file", str(big), "--max-bytes", "0"])
    assert res.exit_code == 2


def test_a_fifo_is_read_up_to_the_cap_only(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.phz"
    os.mkfifo(fifo)
    written = []

    def writer() -> None:
        try:
            with open(fifo, "wb") as f:
                for _ in range(64):  # 4 MiB offered, far more than the cap
                    f.write(b"#" * (1 << 16))
                    written.append(1)
        except BrokenPipeError:
            pass

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        with pytest.raises(ReplayFileError, match="larger than 1,048,576 bytes"):
            replay_file.read_replay_file(fifo)
    finally:
        t.join(timeout=60)
    assert len(written) < 64  # the reader stopped; the writer got a broken pipe


def test_a_directory_and_a_missing_file(tmp_path: Path) -> None:
    r = CliRunner()
    one_error(r.invoke(main, ["replay", "--file", str(tmp_path)]).stderr)
    res = r.invoke(main, ["import", str(tmp_path / "none.phz"), "--data", str(tmp_path)])
    assert res.exit_code == 2
    one_error(res.stderr, "no such file")


def test_batch_line_cap_keeps_what_was_scored(tmp_path: Path) -> None:
    batch = tmp_path / "b.jsonl"
    batch.write_text(GOOD_LINE + "\n" + GOOD_LINE + "\n" + "x" * 70_000 + "\n" + GOOD_LINE + "\n")
    res = CliRunner().invoke(main, ["score", "--batch", str(batch)])
    assert res.exit_code == 0  # the long line is answered and skipped (issue 20, item 9)
    out = res.stdout.splitlines()
    assert len(out) == 4 and '"win":true' in out[3] and res.stderr == ""
    assert json.loads(out[2]) == {
        "line": 3,
        "error": "longer than 65,536 bytes, the limit (raise it with --max-line-bytes)",
    }
    res = CliRunner().invoke(main, ["score", "--batch", str(batch), "--max-line-bytes", "100000"])
    assert res.exit_code == 0
    out = res.stdout.splitlines()
    assert len(out) == 4 and '"line":3' in out[2] and '"win":true' in out[3]


def test_batch_line_exactly_at_the_cap(tmp_path: Path) -> None:
    n = len(GOOD_LINE.encode())
    batch = tmp_path / "b.jsonl"
    batch.write_text(GOOD_LINE + "\n" + GOOD_LINE)  # the last line has no newline
    res = CliRunner().invoke(main, ["score", "--batch", str(batch), "--max-line-bytes", str(n)])
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 2
    res = CliRunner().invoke(main, ["score", "--batch", str(batch), "--max-line-bytes", str(n - 1)])
    assert res.exit_code == 0 and res.stdout.count('"error":"longer than') == 2


def test_batch_from_stdin_is_bounded_too() -> None:
    res = CliRunner().invoke(main, ["score", "--batch", "-"], input="y" * 100_000)
    assert res.exit_code == 0 and res.stdout.startswith('{"line":1,"error":"longer than 65,536')
