"""The README's "Durable runs" examples, run as written (RUN_ID replaced by the id of the run the first line made),
in a folder holding a copy of config/."""

from __future__ import annotations

import json
import re
import shutil
import signal
from pathlib import Path

from durable_harness import aeon, readme_args, start

ROOT = Path(__file__).resolve().parents[2]


def _blocks() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Durable runs", 1)[1].split("\n## ", 1)[0]
    return [b.strip().splitlines() for b in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)]


def test_readme_durable_examples_run_as_written(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "config", tmp_path / "config")
    first, _ = _blocks()
    made = aeon(tmp_path, *readme_args(first[0]))
    assert made.returncode == 0, made.stderr
    run_id = re.search(r"durable run (\S+) ", made.stderr).group(1)  # type: ignore[union-attr]
    listed = aeon(tmp_path, *readme_args(first[1]))
    assert listed.returncode == 0 and run_id in listed.stdout and "completed" in listed.stdout
    resumed = aeon(tmp_path, *readme_args(first[2], run_id))
    assert resumed.returncode == 0 and "answer: The sum is 15." in resumed.stdout
    replayed = aeon(tmp_path, *readme_args(first[3], run_id))
    assert replayed.returncode == 0, replayed.stderr
    assert "answer: Adding 5 and 10 gives 15." in replayed.stdout
    batch = aeon(tmp_path, *readme_args(first[4]))
    assert batch.returncode == 0, batch.stderr
    results = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results] == ["completed"] * 3


def test_readme_worker_example_serves_a_batch_that_only_enqueues(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "config", tmp_path / "config")
    _, second = _blocks()
    worker = start(tmp_path, *readme_args(second[0]))
    try:
        served = aeon(tmp_path, *readme_args(second[1]))
        assert served.returncode == 0, served.stderr
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(30)
    assert worker.returncode == 0
    results = (tmp_path / "config" / "batch-sums.results.jsonl").read_text().splitlines()
    assert [json.loads(x)["status"] for x in results] == ["completed"] * 3
    assert "worker worker-host-a serving aeon-batch" in worker.stderr.read()  # type: ignore[union-attr]
