"""The README's "Python API" section and the examples/ folder, run as written: each of the section's code blocks
is an example file, and every example runs offline, from the root of a folder holding examples/, as a user runs it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import aeon

from cli_harness import ROOT, readme_files

EXAMPLES = ROOT / "examples"
# What each example prints (the stream's token counts change with the prompts: its first and last lines and a step)
PRINTS = {
    "quickstart.py": ["completed", "sunny in Paris", "2 LLM calls, 1 pass"],
    "async_run.py": ["completed sunny in Paris ['Paris']"],
    "stream_events.py": ["pass 1 · phase A", "  s1 complete: sunny in Paris", "completed: sunny in Paris"],
}


def run_example(name: str, folder: Path, pythonpath: str) -> subprocess.CompletedProcess[str]:
    """`python examples/NAME` in `folder`, with no AEON_* setting and no provider key from the developer's shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_") and not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = pythonpath
    cmd = [sys.executable, f"examples/{name}"]
    return subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_each_code_block_of_the_python_api_section_is_an_example_file() -> None:
    blocks = readme_files("Python API")

    assert blocks
    for name, body in blocks.items():
        assert re.fullmatch(r"examples/\w+\.py", name), name
        assert f"# {name}\n{body}" == (ROOT / name).read_text(encoding="utf-8")


def test_every_example_is_checked() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(PRINTS)


@pytest.mark.parametrize("name", sorted(PRINTS))
def test_each_example_runs_offline_as_written(name: str, tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    source = str(Path(aeon.__file__).parents[1])  # this checkout's aeon, installed or not

    proc = run_example(name, tmp_path, source)

    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    if name == "stream_events.py":
        assert (lines[0], lines[-1]) == (PRINTS[name][0], PRINTS[name][-1]) and PRINTS[name][1] in lines
    else:
        assert lines == PRINTS[name]
