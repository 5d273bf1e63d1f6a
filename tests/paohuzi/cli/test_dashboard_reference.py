"""``paohuzi dashboard --reference FILE``: the Reference page's file reaches the Streamlit
process in ``$PAOHUZI_REFERENCE`` (absolute); an empty name or a folder is one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.dashboard import streamlit_command
from paohuzi.cli.main import main
from replay.reference.published import REFERENCE_ENV


def test_the_file_goes_to_the_page_in_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _, env = streamlit_command(tmp_path, 8765, "127.0.0.1", reference=Path("ref.json"))
    assert env[REFERENCE_ENV] == str(tmp_path / "ref.json")
    monkeypatch.setenv(REFERENCE_ENV, "/elsewhere/ref.json")  # the caller's, without the option
    _, env = streamlit_command(tmp_path, 8765, "127.0.0.1")
    assert env[REFERENCE_ENV] == "/elsewhere/ref.json"


@pytest.mark.parametrize(
    ("value", "says"),
    [("", "empty file name (leave --reference out for the default)"), (".", "is a directory")],
)
def test_an_empty_name_or_a_folder_is_refused(value: str, says: str) -> None:
    r = CliRunner().invoke(main, ["dashboard", "--reference", value])
    assert r.exit_code == 2 and says in r.output, r.output
    assert "Traceback" not in r.output
