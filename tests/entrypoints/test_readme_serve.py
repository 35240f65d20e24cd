"""The README's "Aeon as a service" examples, run as written in a folder holding a copy of config/: the server
started as the first line says (on a free port instead of 8766, which the curl lines are pointed at), each curl line
run by the shell with RUN_ID replaced by the id the POST answered; and the token commands."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from durable_harness import aeon, env, readme_args
from serve_harness import start

ROOT = Path(__file__).resolve().parents[2]


def _blocks() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Aeon as a service", 1)[1].split("\n## ", 1)[0]
    return [b.strip().splitlines() for b in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)]


def _curl(folder: Path, line: str, port: str, run_id: str = "") -> str:
    command = line.replace("8766", port).replace("RUN_ID", run_id)
    done = subprocess.run(["bash", "-c", command], cwd=folder, env=env(folder), capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, (command, done.stderr)
    return done.stdout


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README's examples use curl, which is not installed")
def test_readme_service_examples_run_as_written(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "config", tmp_path / "config")
    (serve, post, one, stream, listed, cancel), _ = _blocks()
    args = readme_args(serve.removesuffix("&").strip())
    server = start(tmp_path, *[a for a in args if a not in ("--port", "8766")][1:])  # harness adds serve --port 0
    port = server.url.rsplit(":", 1)[1]
    try:
        run_id = json.loads(_curl(tmp_path, post, port))["run_id"]
        events = _curl(tmp_path, stream, port, run_id)
        doc = json.loads(_curl(tmp_path, one, port, run_id))
        page = json.loads(_curl(tmp_path, listed, port))
        cancelled = json.loads(_curl(tmp_path, cancel, port, run_id))
    finally:
        server.stop()

    assert "event: run_start" in events and "event: run_end" in events and events.rstrip().endswith('"the run ended"}')
    assert doc["status"] == "completed" and doc["result"]["answer"] == "The sum of 5 and 10 is 15."
    assert [r["run_id"] for r in page["runs"]] == [run_id] and cancelled["status"] == "completed"  # it had ended


def test_readme_token_commands_run_as_written(tmp_path: Path) -> None:
    _, (add, listed, revoke) = _blocks()
    made = aeon(tmp_path, *readme_args(add.split("#")[0]))
    assert made.returncode == 0 and made.stdout.startswith("aeon_")
    shown = aeon(tmp_path, *readme_args(listed.split("#")[0]))
    assert shown.returncode == 0 and shown.stdout.startswith("ci  made ") and made.stdout.strip() not in shown.stdout
    gone = aeon(tmp_path, *readme_args(revoke.split("#")[0]))
    assert gone.returncode == 0 and "token ci revoked" in gone.stderr
    assert aeon(tmp_path, *readme_args(listed.split("#")[0])).stdout == ""
