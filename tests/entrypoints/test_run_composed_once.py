"""The default `aeon run` (durable) reads its settings once and builds one container: the durable run executing in
the same process is composed from the settings the command loaded and by the container it built, not from its
recorded config loaded a second time into a second container."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from durable_harness import env, scripted

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = yaml.safe_load((ROOT / "config" / "scripts" / "sum-5-and-10.yaml").read_text())["responses"]

COUNTED = """
import sys
import aeon.entrypoints.config.layers as layers
import aeon.entrypoints.container as c

counts = {"settings": 0, "containers": 0}
load, build = layers.load_settings, c.build_container

def load_settings(*args, **kwargs):
    counts["settings"] += 1
    return load(*args, **kwargs)

def build_container(*args, **kwargs):
    counts["containers"] += 1
    return build(*args, **kwargs)

layers.load_settings, c.build_container = load_settings, build_container
from aeon.entrypoints.cli import main

try:
    main()
except SystemExit as done:
    sys.stderr.write(f"exit {done.code}\\n")
sys.stderr.write(f"counted {counts['settings']} {counts['containers']}\\n")
"""


def _counted(tmp_path: Path) -> tuple[int, int]:
    cfg = scripted(tmp_path, "demo.yaml", SCRIPT)
    command = [sys.executable, "-c", COUNTED, "run", "calculate the sum of 5 and 10", "--config", str(cfg), "-q"]
    done = subprocess.run(command, cwd=tmp_path, env=env(tmp_path), capture_output=True, text=True, timeout=120)
    assert "exit 0" in done.stderr and "durable run" in done.stderr, done.stderr
    line = next(line for line in done.stderr.splitlines() if line.startswith("counted "))
    settings, containers = line.split()[1:]
    return int(settings), int(containers)


def test_the_default_durable_run_loads_its_settings_once_and_builds_one_container(tmp_path: Path) -> None:
    settings, containers = _counted(tmp_path)
    assert settings == 1
    assert containers == 1  # the command's container builds the durable run executing in this process too


API = (
    COUNTED.split("from aeon.entrypoints.cli import main")[0]
    + """
import aeon

result = aeon.run("calculate the sum of 5 and 10", config=sys.argv[1], durable=True)
sys.stderr.write(f"status {result.status.value}\\n")
sys.stderr.write(f"counted {counts['settings']} {counts['containers']}\\n")
"""
)


def test_a_durable_aeon_run_loads_its_settings_once_and_builds_one_container(tmp_path: Path) -> None:
    cfg = scripted(tmp_path, "demo.yaml", SCRIPT)
    command = [sys.executable, "-c", API, str(cfg)]
    done = subprocess.run(command, cwd=tmp_path, env=env(tmp_path), capture_output=True, text=True, timeout=120)
    assert "status completed" in done.stderr, done.stderr
    line = next(line for line in done.stderr.splitlines() if line.startswith("counted "))
    assert line.split()[1:] == ["1", "1"]
