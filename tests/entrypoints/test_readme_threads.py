"""The README's "Threads" examples, run as written in a folder holding a copy of config/: a durable follow-up's
recorded prompt input holds the earlier answer, the thread lists both turns, and delete removes it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import msgspec
from durable_harness import aeon, readme_args

ROOT = Path(__file__).resolve().parents[2]


def _lines() -> list[str]:
    section = (ROOT / "README.md").read_text().split("## Threads", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return block.group(1).strip().splitlines()


def _recorded_thread(tmp_path: Path, run_id: str) -> dict[str, object]:
    from dbos import DBOSClient

    client = DBOSClient(system_database_url=f"sqlite:///{tmp_path / '.aeon' / 'aeon.sqlite'}")
    try:
        found = client.list_workflows(workflow_ids=[run_id])
        spec: dict[str, object] = msgspec.json.decode(found[0].input["args"][0])
    finally:
        client.destroy()
    thread = spec["thread"]
    assert isinstance(thread, dict)
    return thread


def test_readme_thread_examples_run_as_written(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "config", tmp_path / "config")
    first, follow_up, listed, shown, deleted = _lines()
    made = aeon(tmp_path, *readme_args(first))
    assert made.returncode == 0 and "answer: 42" in made.stdout, made.stderr
    done = aeon(tmp_path, *readme_args(follow_up))
    assert done.returncode == 0 and "answer: 14.0" in done.stdout, done.stderr
    second = re.search(r"durable run (\S+) ", done.stderr).group(1)  # type: ignore[union-attr]
    thread = _recorded_thread(tmp_path, second)  # what the follow-up's planner was shown, on the record
    assert thread["name"] == "calc"
    assert thread["conversation"] == "Earlier request: multiply 6 by 7\nEarlier answer: 42"

    assert re.search(r"calc\s+2 turn\(s\)", aeon(tmp_path, *readme_args(listed)).stdout)
    text = aeon(tmp_path, *readme_args(shown)).stdout
    assert "request: and now divide that by 3" in text and "answer:  14.0" in text and f"run {second}" in text
    assert aeon(tmp_path, *readme_args(deleted)).returncode == 0
    assert "no threads yet" in aeon(tmp_path, *readme_args(listed)).stdout
