"""Subprocess helpers for the durable-run tests: an `aeon` command in a folder of its own, configs, the log."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

AEON = [sys.executable, "-c", "from aeon.entrypoints.cli import main; main()"]
SRC = Path(__file__).resolve().parents[2] / "src"

TOOLS = '''
import os
import pathlib
import time

from aeon.adapters.tools.decorator import tool


@tool(example={"text": "a"})
def record(text: str) -> str:
    """Append text to the side-effect file (not idempotent) and return it."""
    with open(os.environ["AEON_TEST_EFFECTS"], "a") as f:
        f.write(text + "\\n")
    return text


@tool(example={"text": "a"})
def record_slowly(text: str) -> str:
    """Append text to the side-effect file, then wait until the release file exists."""
    with open(os.environ["AEON_TEST_EFFECTS"], "a") as f:
        f.write(text + "\\n")
    release = pathlib.Path(os.environ["AEON_TEST_EFFECTS"] + ".release")
    while not release.exists():
        time.sleep(0.01)
    return text


@tool(example={"text": "a"}, pure=True)
def shout(text: str) -> str:
    """Upper-case text (pure); each call is noted in the calls file, for the tests to count."""
    with open(os.environ["AEON_TEST_EFFECTS"] + ".pure", "a") as f:
        f.write(text + "\\n")
    return text.upper()


@tool(example={"text": "a"}, pure=True)
def drift(text: str) -> str:
    """Says it is pure, yet answers with how many times it was called."""
    calls = pathlib.Path(os.environ["AEON_TEST_EFFECTS"] + ".pure")
    with calls.open("a") as f:
        f.write(text + "\\n")
    return f"{text} {len(calls.read_text().splitlines())}"


@tool(example={"text": "a"}, idempotent=True)
def wait_for_release(text: str) -> str:
    """Say that it started, then wait until the release file exists (safe to run twice)."""
    pathlib.Path(os.environ["AEON_TEST_EFFECTS"] + ".started").touch()
    release = pathlib.Path(os.environ["AEON_TEST_EFFECTS"] + ".release")
    while not release.exists():
        time.sleep(0.01)
    return text
'''


def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AEON_") and not k.endswith("_API_KEY")}
    path = os.pathsep.join([str(SRC), str(tmp_path)])  # this checkout's Aeon first, then the test's tool modules
    return {**clean, "AEON_TEST_EFFECTS": str(tmp_path / "effects.txt"), "PYTHONPATH": path}


def config(
    tmp_path: Path,
    name: str,
    llm: dict[str, Any],
    database_url: str | None = None,
    defer: float | None = None,
    **run: Any,
) -> Path:
    """A config for the test's folder. `defer` is durable.defer_answers_under; by default the base config's for a
    scripted model, and 0 for the fake provider: it answers within a millisecond where a real model takes hundreds,
    so that its answers are written one by one, as a real model's are."""
    (tmp_path / "durable_test_tools.py").write_text(TOOLS)
    doc: dict[str, Any] = {
        "llm": llm,
        "run": {"ttl": 1, "max_llm_calls": 20, **run},
        "tools": {"modules": ["durable_test_tools"]},
        "log": {"path": str(tmp_path / "runs.jsonl")},
    }
    durable: dict[str, Any] = {}
    if database_url:
        durable["database_url"] = database_url
    if defer is None and llm.get("adapter") != "scripted":
        defer = 0.0
    if defer is not None:
        durable["defer_answers_under"] = defer
    if durable:
        doc["durable"] = durable
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


def scripted(tmp_path: Path, name: str, responses: Sequence[str], **run: Any) -> Path:
    script = tmp_path / f"{name}.script.yaml"
    script.write_text(yaml.safe_dump({"responses": list(responses)}))
    return config(tmp_path, name, {"adapter": "scripted", "script": str(script)}, **run)


def aeon(tmp_path: Path, *args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AEON, *map(str, args)], cwd=tmp_path, env=env(tmp_path), capture_output=True, text=True, timeout=timeout
    )


def start(tmp_path: Path, *args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*AEON, *map(str, args)],
        cwd=tmp_path,
        env=env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition: Callable[[], bool], timeout: float = 60, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def records(path: Path, run_id: str | None = None) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in lines if run_id is None or r["correlation_id"] == run_id]


def runs(tmp_path: Path) -> list[dict[str, Any]]:
    done = aeon(tmp_path, "runs", "--json")
    assert done.returncode == 0, done.stderr
    listed: list[dict[str, Any]] = json.loads(done.stdout)
    return listed


STABLE = ("status", "request", "plan", "outputs", "answer", "passes", "converged", "counts", "advisories")


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """A result without what differs between two runs of the same thing: ids and timings."""
    kept = {k: doc.get(k) for k in STABLE}
    budget = dict(doc["budget"])
    kept["budget"] = budget
    return json.loads(json.dumps(kept).replace(doc["correlation_id"], "RUN"))


def readme_args(line: str, run_id: str = "") -> list[str]:
    """The arguments of a README line `.venv/bin/aeon …`, RUN_ID replaced by `run_id`."""
    words = shlex.split(line.replace("RUN_ID", run_id))
    assert words[0] == ".venv/bin/aeon", line
    return words[1:]
