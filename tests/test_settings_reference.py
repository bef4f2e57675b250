"""docs/settings.md and .env.example are generated from the Settings model (scripts/settings_reference.py):
they must be what the model generates now, and every group of the model must say who reads it."""

import importlib.util
import sys
from pathlib import Path

from core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("settings_reference", ROOT / "scripts" / "settings_reference.py")
assert _spec and _spec.loader
reference = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = reference  # its dataclasses look their module up
_spec.loader.exec_module(reference)


def test_the_generated_files_are_up_to_date():
    stale = [str(path.relative_to(ROOT)) for path, text in reference.outputs().items() if path.read_text() != text]
    assert stale == [], "run: python scripts/settings_reference.py"


def test_the_check_names_a_stale_file_and_fails(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "settings.md"
    stale.write_text("# an older reference\n")
    monkeypatch.setattr(reference, "REFERENCE", stale)
    assert reference.main(["--check"]) == 1
    assert "settings.md is out of date" in capsys.readouterr().err


def test_every_setting_is_listed_once_with_its_group_known():
    settings = list(reference.walk(Settings))
    names = [setting.name for setting in settings]
    assert len(names) == len(set(names)) and len(names) > 50
    assert sorted({s.group for s in settings} - set(reference.GROUPS)) == [], "add the group to GROUPS"
    assert sorted(set(reference.GROUPS) - {s.group for s in settings}) == [], "GROUPS names a group that is gone"
    assert sorted(set(reference.READ_BY) - set(names)) == [], "READ_BY names a setting that is gone"


def test_rows_say_type_default_and_secrecy():
    rows = {
        line.split("|")[1].strip(" `"): line for line in reference.REFERENCE.read_text().splitlines() if "| `" in line
    }
    assert "one of: standard, quick, auto" in rows["COUNCIL_MODE"] and "`standard`" in rows["COUNCIL_MODE"]
    assert "| secret |" in rows["SLACK_BOT_TOKEN"] and "| integer | `120` |" not in rows["SLACK_BOT_TOKEN"]
    assert "| number | `120` |" in rows["COUNCIL_TIMEOUT_S"]
    example = reference.EXAMPLE.read_text().splitlines()
    assert "SLACK_BOT_TOKEN=" in example and "COUNCIL_TIMEOUT_S=120" in example and "COUNCIL_MODE=standard" in example
