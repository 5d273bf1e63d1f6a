"""Installed like a library (issue 61): the wheel built from this checkout, installed into a
fresh virtual environment, holds every file a command reads, and its commands run from a
folder outside the checkout — ``simulate`` (with the shipped ``learned@hunan`` weights),
``stats --json``, ``replay``, ``score``, ``serve`` (``/health``, ``/runs``), ``dashboard``
(its health check) and the published reference figures the dashboard's Reference page reads.

How, in about half a minute and with no download:

* the sources — ``pyproject.toml``, ``README.md``, the four packages (and
  ``docs/reference/reference.json``, which ``replay/reference/reference.json`` links to) — are
  copied to a temporary folder and the wheel is built there (``pip wheel --no-deps
  --no-build-isolation``: this environment's setuptools; nothing is written into the checkout);
* a fresh environment (``python -m venv --without-pip``) gets the wheel by ``pip --python VENV
  install --no-deps``; its dependencies are this environment's site-packages, named in a
  ``.pth`` file — whose own ``.pth`` files, the editable install's finder among them, are not
  read, so the fresh environment never sees the checkout (the test checks where every package
  and the console script come from);
* numba's compiled kernels are copied beside the installed sources (:func:`_seed_kernels`):
  numba keys its cache by the source's modification time and size, so the installed sources
  take the checkout's times. Without them a first ``simulate`` compiles for a minute or more,
  as on any new machine; with stale ones it compiles what changed, slower but no less right.

What it ran and saw is printed (``pytest -s tests/test_wheel.py`` shows it).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
import zipfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "replay", "dashboard", "paohuzi")
#: A hand the calculator scores as a win (docs/COMMANDS.md).
HAND = ["壹贰叁柒捌玖六七八九九", "--meld", "pao:伍", "--meld", "peng:三", "--meld", "chi:二,七,十"]
#: Seconds a server is given to answer its health check.
START_SECONDS = 60.0


def _say(text: str) -> None:
    print(text, flush=True)


def _copy_sources(dst: Path) -> None:
    """What the wheel is built from, without caches; the links a package holds are kept as
    links, with what they point to."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dst / name)
    for pkg in PACKAGES:
        shutil.copytree(
            ROOT / pkg,
            dst / pkg,
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    for link in [p for pkg in PACKAGES for p in (dst / pkg).rglob("*") if p.is_symlink()]:
        target = (ROOT / link.relative_to(dst)).resolve()
        assert ROOT in target.parents, f"{link.relative_to(dst)} points out of the checkout"
        copied = dst / target.relative_to(ROOT)
        copied.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(target, copied)


#: The temporary folder, written TMP in what is printed.
_TMP: list[str] = []


def _short(text: str) -> str:
    return text.replace(_TMP[-1], "TMP") if _TMP else text


def _run(
    args: Sequence[str], cwd: Path, env: dict[str, str], timeout: float = 300.0
) -> subprocess.CompletedProcess[str]:
    start = time.monotonic()
    r = subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    shown = _short(" ".join([Path(args[0]).name, *args[1:]]))
    _say(f"$ {shown}    ({time.monotonic() - start:.1f} s, exit {r.returncode})")
    assert r.returncode == 0, f"{shown}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def _show(text: str, lines: int = 4) -> None:
    for line in text.strip().splitlines()[:lines]:
        _say(_short(f"    {line}"))


def _seed_kernels(installed: Path) -> int:
    """Copy the checkout's numba cache of ``engine/fast`` beside the installed sources and
    give those the checkout's modification times (numba's key: time and size); the number of
    cache files copied (0 when the checkout has compiled nothing)."""
    src = ROOT / "engine" / "fast"
    cache = src / "__pycache__"
    if not cache.is_dir():
        return 0
    dst = installed / "engine" / "fast"
    for py in src.glob("*.py"):
        there = dst / py.name
        if there.is_file() and there.read_bytes() == py.read_bytes():
            st = py.stat()
            os.utime(there, ns=(st.st_atime_ns, st.st_mtime_ns))
    (dst / "__pycache__").mkdir(exist_ok=True)
    copied = 0
    for f in cache.iterdir():
        if f.suffix in (".nbi", ".nbc") or f.name.endswith(".deps.sha256"):
            shutil.copy2(f, dst / "__pycache__" / f.name)
            copied += 1
    return copied


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.read()


def _until_up(proc: subprocess.Popen[str], url: str) -> bytes:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            status, body = _get(url)
            if status == 200:
                return body
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer (exit {proc.poll()})")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_the_wheel_runs_the_commands_outside_the_checkout(tmp_path: Path) -> None:
    start = time.monotonic()
    _TMP.append(str(tmp_path))
    src, dist, venv, work = (tmp_path / n for n in ("src", "dist", "venv", "work"))
    for d in (src, dist, work):
        d.mkdir()
    _copy_sources(src)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAOHUZI_", "PYTHON"))}
    env.pop("NUMBA_CACHE_DIR", None)  # numba caches beside the installed sources

    # the wheel, and every file of the packages in it
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--no-index", "-q", "-w", str(dist), str(src)], src, env)  # fmt: skip
    (wheel,) = dist.glob("paohuzi-*.whl")
    with zipfile.ZipFile(wheel) as z:
        packed = {n for n in z.namelist() if n.split("/")[0] in PACKAGES}
    files = {
        p.relative_to(src).as_posix()
        for pkg in PACKAGES
        for p in (src / pkg).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert files - packed == set(), "files of the packages the wheel leaves out"
    data = sorted(n for n in packed if not n.endswith(".py"))
    _say(f"    {wheel.name}: {len(packed)} files, {len(packed) - len(data)} modules and {data}")

    # a fresh environment with the wheel; the dependencies are this one's, the checkout unseen
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, env)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
          "--no-index", "-q", str(wheel)], tmp_path, env)  # fmt: skip
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            text=True,
        ).strip()
    )
    (site / "_paohuzi_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _say(f"    numba cache: {_seed_kernels(site)} files of the checkout's engine/fast")
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    paohuzi = str(venv / "bin" / "paohuzi")

    deps = sysconfig.get_paths()["purelib"]
    where = json.loads(
        _run(
            [str(python), "-c", "import json, sys, engine, replay, dashboard, paohuzi; print(json.dumps("
             "[[m.__file__ for m in (engine, replay, dashboard, paohuzi)], sys.path]))"], work, env,
        ).stdout
    )  # fmt: skip
    _show("\n".join(where[0]))
    assert all(Path(f).is_relative_to(site) for f in where[0]), where
    # nothing of the checkout on the path but the dependencies' folder (this environment's)
    seen = [p for p in where[1] if p != deps and Path(p or work).resolve().is_relative_to(ROOT)]
    assert seen == [], seen
    with open(ROOT / "pyproject.toml", "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    got = _run([paohuzi, "--version"], work, env).stdout
    _show(got)
    assert version in got

    # simulate with a shipped weights file, then read what it recorded
    store = work / "data"
    r = _run([paohuzi, "simulate", "-n", "12", "--seed", "3", "-w", "1", "-q", "--data",
              str(store), "--run", "wheel", "--policies", "learned@hunan,heuristic,greedy"],
             work, env)  # fmt: skip
    _show(r.stdout)
    assert "run wheel: 12 hands" in r.stdout
    r = _run([paohuzi, "stats", "--data", str(store), "--json"], work, env)
    (run,) = json.loads(r.stdout)["runs"]
    _say(f"    runs[0]: {run['run']}, {run['hands']} hands, policies {run['policies']}")
    assert (run["hands"], run["policies"][0]) == (12, "learned@hunan")
    r = _run([paohuzi, "replay", "wheel", "0", "--data", str(store)], work, env)
    _show("\n".join(line for line in r.stdout.splitlines() if "result:" in line))
    assert "result:" in r.stdout
    r = _run([paohuzi, "score", *HAND], work, env)
    _show(r.stdout, 3)
    assert "胡" in r.stdout

    # the published reference figures the dashboard's Reference page reads
    r = _run(
        [str(python), "-c", "from replay.reference.published import default_path, read_published;"
         " p = default_path(); print(p); print(*sorted(read_published(p).presets))"], work, env,
    )  # fmt: skip
    _show(r.stdout)
    assert Path(r.stdout.splitlines()[0]).is_relative_to(site)

    # serve: /health and /runs
    began = time.monotonic()
    proc = subprocess.Popen(
        [paohuzi, "serve", "--data", str(store), "--port", "0"],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        base = line.split()[2] if line.startswith("paohuzi serve: http") else ""
        assert base, f"paohuzi serve printed {line!r}"
        health = _until_up(proc, f"{base}/health")
        _, body = _get(f"{base}/runs")
        runs = [r["run"] for r in json.loads(body)]
        assert runs == ["wheel"], runs
        _say(f"$ paohuzi serve --data TMP/work/data --port 0    ({time.monotonic() - began:.1f} s)")
        _say(f"    GET /health: {health.decode()}; GET /runs: {runs}")
    finally:
        _stop(proc)

    # the dashboard: the installed app starts and answers its health check
    port = _free_port()
    began = time.monotonic()
    proc = subprocess.Popen(
        [paohuzi, "dashboard", "--data", str(store), "--port", str(port),
         "--address", "127.0.0.1"],
        cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        health = _until_up(proc, f"http://127.0.0.1:{port}/_stcore/health")
        _say(
            f"$ paohuzi dashboard --data TMP/work/data --port {port} --address 127.0.0.1"
            f"    ({time.monotonic() - began:.1f} s)\n    GET /_stcore/health: {health.decode()}"
        )
    finally:
        _stop(proc)
    _say(f"    all in {time.monotonic() - start:.1f} s")
    _TMP.pop()
