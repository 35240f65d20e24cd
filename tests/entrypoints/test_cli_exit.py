"""The `aeon` console script ends its process as soon as the command is done (no module teardown): with the
command's exit code, its output whole, and its exit hooks run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import aeon

from cli_harness import DEMO_CONFIG, REQUEST

CONSOLE = "import sys, atexit; sys.argv[0] = 'aeon'; {hook}from aeon.entrypoints.cli import console; console()"


def console(*args: str | Path, cwd: Path, hook: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(aeon.__file__).parents[1]), str(cwd)])}
    code = CONSOLE.format(hook=hook)
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("durable", ["--durable", "--no-durable"])
def test_a_run_ends_with_its_code_its_whole_output_and_its_exit_hooks_run(tmp_path: Path, durable: str) -> None:
    hook = "atexit.register(lambda: print('hooks ran', file=sys.stderr)); "
    done = console("run", REQUEST, "--config", DEMO_CONFIG, "--json", durable, cwd=tmp_path, hook=hook)

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outputs"]["s1"]["output"] == 15  # the one JSON document, whole
    assert done.stderr.rstrip().endswith("hooks ran")


def test_a_usage_error_keeps_its_exit_code(tmp_path: Path) -> None:
    done = console("run", REQUEST, "--ttl", "-1", cwd=tmp_path)
    assert done.returncode == 2 and "ttl" in done.stderr.lower()
    assert console("--version", cwd=tmp_path).returncode == 0
