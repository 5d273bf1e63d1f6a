"""Builders shared by the dashboard's tests: the fixture store's runs, a copy of a store to
damage, a manifest edit. Test modules import these from here, never from another test
module or from a conftest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from click.testing import CliRunner

from dashboard.ui import PAGE_FILES
from paohuzi.cli.main import main

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app.py"

#: The fixture store: a greedy baseline, a --duplicate run with two policies, a 4-player run,
#: a 10-胡息 run and an ordinary run with two policies; a few seconds with one worker.
FIXTURE_RUNS: list[tuple[str, list[str]]] = [
    ("base", ["-n", "240", "--seed", "11", "--policies", "greedy"]),
    ("dup", ["-n", "60", "--seed", "12", "--policies", "greedy,random,random", "--duplicate"]),
    ("four", ["-n", "80", "--seed", "13", "--rules", "hunan-4p", "--policies", "greedy"]),
    ("min10", ["-n", "100", "--seed", "14", "--policies", "greedy", "--set", "min_huxi=10"]),
    ("mixed", ["-n", "90", "--seed", "15", "--policies", "greedy,random,greedy"]),
]


def simulate(data: Path, name: str, args: list[str]) -> None:
    r = CliRunner().invoke(
        main, ["simulate", "--data", str(data), "-w", "1", "-q", "--run", name, *args]
    )
    assert r.exit_code == 0, r.output


def copy_store(src: Path, dst: Path, runs: list[str] | None = None) -> Path:
    """A copy of the store (only ``runs`` if given), to damage without harming the fixture."""
    (dst / "runs").mkdir(parents=True)
    for p in (src / "runs").iterdir():
        if runs is None or p.name.removeprefix("run=") in runs:
            shutil.copytree(p, dst / "runs" / p.name)
    return dst


def edit_manifest(run_path: Path, **changes: object) -> None:
    path = run_path / "manifest.json"
    m = json.loads(path.read_text())
    m.update(changes)
    path.write_text(json.dumps(m))


#: The browser the page tests (and bench/pages.py) drive: Debian's, headless, offline.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = ROOT / "tests" / "artifacts"
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'


#: The app's own page table: a new page is tested without a second list.
PAGES = PAGE_FILES


def run_page(page: str, query: dict[str, str] | None = None) -> AppTest:
    """The app in AppTest on one page (``PAGES`` key), with a query string."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page(PAGES[page])  # also for the default page: AppTest then keeps the sidebar
    if query:
        at.query_params.update(query)
    at.run()
    return at
