"""The README's "Human approval" example, run as written (RUN_ID replaced by the id of the run the first line made),
in a folder holding a copy of config/: the run waits (exit 6), is listed as awaiting approval, and the approval
with edited arguments publishes once, with the edited title on the record."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from durable_harness import aeon, readme_args

ROOT = Path(__file__).resolve().parents[2]


def _lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Human approval", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    return block.strip().splitlines()


def test_readme_approval_example_runs_as_written(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "config", tmp_path / "config")
    run, listing, approve = _lines()
    waiting = aeon(tmp_path, *readme_args(run))
    assert waiting.returncode == 6, waiting.stderr
    doc = json.loads(waiting.stdout)
    assert doc["status"] == "awaiting_approval" and doc["pending_approval"]["tool"] == "publish"
    assert not (tmp_path / "published.txt").exists()
    run_id = doc["correlation_id"]
    listed = aeon(tmp_path, *readme_args(listing))
    assert listed.returncode == 0 and run_id in listed.stdout and "awaiting_approval" in listed.stdout
    done = aeon(tmp_path, *readme_args(approve, run_id))
    assert done.returncode == 0, done.stderr
    assert "published 'Release 1.2 notes' on blog" in done.stdout
    assert (tmp_path / "published.txt").read_text() == "blog: Release 1.2 notes\n"
