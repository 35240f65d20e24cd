"""A batch file submitted again returns its earlier results and says they were reused; `--fresh` runs it again as
new runs, and a plain submission after that goes on with the fresh ones."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from durable_harness import aeon, records, scripted

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = yaml.safe_load((ROOT / "config/scripts/sum-5-and-10.yaml").read_text())["responses"]


def _submit(tmp_path: Path, requests: Path, cfg: Path, *extra: str) -> tuple[dict, list[str], str]:
    out = tmp_path / "out.jsonl"
    done = aeon(tmp_path, "batch", requests, "--config", cfg, "--out", out, "--json", *extra)
    assert done.returncode == 0, done.stderr
    ids = [json.loads(line)["run_id"] for line in out.read_text().splitlines()]
    return json.loads(done.stdout), ids, done.stderr


def test_a_batch_submitted_again_says_its_results_are_reused_and_fresh_runs_it_again(tmp_path: Path) -> None:
    cfg = scripted(tmp_path, "batch.yaml", SCRIPT)
    requests = tmp_path / "sums.jsonl"
    lines = [json.dumps({"request": f"calculate the sum of 5 and 10 (#{i})"}) for i in (1, 2)]
    requests.write_text("\n".join(lines) + "\n")

    first, first_ids, err = _submit(tmp_path, requests, cfg)
    assert first["reused"] == 0 and first["runs"] == 2 and first["failed"] == 0
    assert "reused" not in err

    again, again_ids, err = _submit(tmp_path, requests, cfg)
    assert again_ids == first_ids
    assert again["reused"] == 2
    assert "2 of 2 runs already finished" in err and "reused" in err and f"aeon batch {requests} --fresh" in err

    fresh, fresh_ids, err = _submit(tmp_path, requests, cfg, "--fresh")
    assert fresh["reused"] == 0
    assert not set(fresh_ids) & set(first_ids)
    log = records(tmp_path / "runs.jsonl")
    started = [r["correlation_id"] for r in log if r["event"] == "run_start"]
    assert sorted(started) == sorted(first_ids + fresh_ids)  # each run ran once; the fresh ones ran anew

    latest, latest_ids, _ = _submit(tmp_path, requests, cfg)
    assert latest_ids == fresh_ids and latest["reused"] == 2
