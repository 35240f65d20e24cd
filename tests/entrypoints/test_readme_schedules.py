"""The README's "Schedules" examples, run as written in a folder holding a copy of config/."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from durable_harness import aeon, readme_args

ROOT = Path(__file__).resolve().parents[2]


def _lines() -> list[str]:
    section = (ROOT / "README.md").read_text().split("## Schedules", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return block.group(1).strip().splitlines()


def test_readme_schedule_examples_run_as_written(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "config", tmp_path / "config")
    added, listed, paused, resumed, removed = _lines()
    done = aeon(tmp_path, *readme_args(added))
    assert done.returncode == 0 and "schedule tickets added: 0 7 * * *" in done.stdout, done.stderr
    shown = aeon(tmp_path, *readme_args(listed)).stdout
    assert re.search(r"^tickets  0 7 \* \* \*  active  not fired yet  \"summarise yesterday's tickets\"$", shown, re.M)
    assert aeon(tmp_path, *readme_args(paused)).stdout == "schedule tickets paused\n"
    assert json.loads(aeon(tmp_path, *readme_args(listed), "--json").stdout)[0]["paused"] is True
    assert aeon(tmp_path, *readme_args(resumed)).stdout == "schedule tickets resumed\n"
    assert aeon(tmp_path, *readme_args(removed)).stdout == "schedule tickets removed\n"
    assert "no schedules" in aeon(tmp_path, *readme_args(listed)).stdout
