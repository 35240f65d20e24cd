"""`aeon runs` shows a run that waited for a decision as long as it lasted, from its start to its end, as `aeon ui`
does, not the few milliseconds of the execution that finished it after `aeon approve`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from durable_harness import aeon
from ui_harness import CONFIG


def test_aeon_runs_counts_an_approved_run_from_its_start_to_its_end(tmp_path: Path) -> None:
    asked = aeon(tmp_path, "run", "publish the release notes", "--config", CONFIG / "scripted-approval.yaml")
    assert asked.returncode == 6, asked.stderr
    found = re.search(r"durable run (\S+) ", asked.stderr)
    assert found is not None, asked.stderr
    # the approval comes from a second process, started after the first one stopped to wait: a second at least
    assert aeon(tmp_path, "approve", found.group(1)).returncode == 0

    listed = aeon(tmp_path, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = [r for r in json.loads(listed.stdout) if r["id"] == found.group(1)]
    assert row["status"] == "completed" and row["duration"] >= 0.5
    assert f"{row['duration']:.1f}s" in aeon(tmp_path, "runs").stdout
