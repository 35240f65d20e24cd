"""The README's "MCP tool servers" example runs as written: its config is the shipped file, and its commands, run
from a folder laid out like the checkout (`config/`, `.venv/bin/`), list the time server's tools and run the demo."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import aeon

from cli_harness import CONFIG_DIR, ROOT, readme_files

SECTION = "MCP tool servers"


def commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    body = text.split(f"## {SECTION}\n", 1)[1].split("\n## ", 1)[0]
    return [
        shlex.split(line) for block in re.findall(r"```bash\n(.*?)```", body, re.DOTALL) for line in block.splitlines()
    ]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The checkout itself when its venv has the time server (CI); else a folder with its config and this venv."""
    if (ROOT / ".venv" / "bin" / "mcp-server-time").exists():
        return ROOT
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "bin").symlink_to(Path(sys.executable).parent)
    (tmp_path / "config").symlink_to(CONFIG_DIR)
    return tmp_path


def test_the_readme_config_is_the_shipped_file_and_the_demo_uses_the_same_server() -> None:
    shown = readme_files(SECTION)["config/mcp-time.yaml"]
    assert shown == (CONFIG_DIR / "mcp-time.yaml").read_text(encoding="utf-8")
    demo = yaml.safe_load((CONFIG_DIR / "scripted-mcp-time.yaml").read_text(encoding="utf-8"))
    assert demo["tools"] == yaml.safe_load(shown)["tools"]


def test_the_readme_commands_run_as_written(checkout: Path, tmp_path: Path) -> None:
    tools, run = commands()
    assert tools[0] == run[0] == ".venv/bin/aeon"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_")}
    env["PYTHONPATH"] = str(Path(aeon.__file__).parents[1])  # this checkout's aeon, whichever venv runs it
    env["AEON_LOG_FILE"] = str(tmp_path / "runs.jsonl")  # not the checkout's .aeon/

    def as_written(argv: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*argv, *extra], cwd=checkout, env=env, capture_output=True, text=True, timeout=120, check=False
        )

    listed = as_written(tools)
    ran = as_written(run, "--json")

    assert listed.returncode == 0, listed.stderr
    assert [line.split()[:2] for line in listed.stdout.splitlines() if " time " in line] == [
        ["time_get_current_time", "time"],
        ["time_convert_time", "time"],
    ]
    assert ran.returncode == 0, ran.stderr
    (step,) = json.loads(ran.stdout)["plan"]["steps"]
    assert step["status"] == "complete" and step["tool"] == "time_get_current_time"
    assert step["step_output"]["timezone"] == "Asia/Tokyo" and step["step_output"]["datetime"].endswith("+09:00")
