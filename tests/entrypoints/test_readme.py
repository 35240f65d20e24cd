"""The README is the front door: its test command is what CI runs, and its commands name real things."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, re.DOTALL)]


def test_ci_runs_exactly_the_readme_test_command():
    blocks = _bash_blocks((ROOT / "README.md").read_text())
    test_cmd = next(b for b in blocks if "pytest" in b)
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == test_cmd


def test_readme_main_job_is_aeon_run_on_the_default_config():
    first = _bash_blocks((ROOT / "README.md").read_text())[0]
    assert first.endswith('aeon run "calculate the sum of 5 and 10"')
    assert '".[local]"' in first


def test_configs_named_in_the_readme_exist():
    for name in re.findall(r"config/[\w.-]+\.yaml", (ROOT / "README.md").read_text()):
        assert (ROOT / name).is_file(), name
