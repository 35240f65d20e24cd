"""CLI test helpers: invoke `aeon` in-process, check clean exits, write scripted configs as users write them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner, Result

from aeon.entrypoints.cli import app

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = ROOT / "config"
DEMO_CONFIG = CONFIG_DIR / "scripted-demo.yaml"
REQUEST = "calculate the sum of 5 and 10"
SUM_STEP = {"step_id": "s1", "description": "Add 5 and 10", "tool": "calculator", "args": {"expression": "5 + 10"}}

runner = CliRunner()


def invoke(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def assert_exit(result: Result, code: int) -> None:
    """The exit code, and a clean exit: no exception escaped typer, no traceback in any output."""
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stdout + result.stderr


def one_line(text: str) -> str:
    """The only line of `text`; fails when there are none or several."""
    lines = text.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def plan_json(*steps: Mapping[str, Any], goal: str = REQUEST) -> str:
    return json.dumps({"goal": goal, "steps": list(steps)})


def log_of(tmp_path: Path) -> Path:
    return tmp_path / "logs" / "run.jsonl"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def scripted_config(tmp_path: Path, responses: Sequence[str | Mapping[str, Any]], **sections: Any) -> Path:
    """A config file using the scripted model (script path relative to the file) and a log under tmp_path."""
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"responses": list(responses)}), encoding="utf-8")
    data: dict[str, Any] = {
        "llm": {"adapter": "scripted", "script": "script.yaml"},
        "log": {"path": str(log_of(tmp_path))},
        "run": {"evaluate": False},
    }
    for key, value in sections.items():
        data[key] = {**data.get(key, {}), **value}
    config = tmp_path / "aeon.yaml"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    return config


def readme_files(section: str) -> dict[str, str]:
    """The code blocks of a README section whose first line is `# <file name>`, by file name."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    files = {}
    for block in re.findall(r"```(?:python|yaml)\n(.*?)```", body, re.DOTALL):
        first, _, rest = block.partition("\n")
        if m := re.fullmatch(r"# ([\w./-]+\.(?:py|yaml))", first.strip()):
            files[m.group(1)] = rest
    return files


def run_user_pytest(folder: Path, *args: str, pythonpath: str | None = None) -> subprocess.CompletedProcess[str]:
    """pytest on a user's test files in `folder`, in a fresh interpreter (no AEON_* settings, no repo conftest)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_") and k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder), *args]
    return subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False)
