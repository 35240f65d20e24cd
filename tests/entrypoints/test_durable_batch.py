"""`aeon batch`: 200 requests on a DBOS queue with --concurrency 8, killed halfway and started again, give 200
results, each request run exactly once; the same served by two `aeon worker` processes on one SQLite file."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import yaml
from durable_harness import aeon, config, records, start, wait_for
from fake_provider import FakeProvider, serving

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = yaml.safe_load((ROOT / "config/scripts/sum-5-and-10.yaml").read_text())["responses"]
KINDS = dict(zip(["profile_and_plan", "step_result", "evaluation"], SCRIPT, strict=True))
N = 200


def _batch_file(tmp_path: Path) -> Path:
    path = tmp_path / "requests.jsonl"
    path.write_text("".join(json.dumps({"request": f"calculate the sum of 5 and 10 (#{i})"}) + "\n" for i in range(N)))
    return path


def _ended(log: Path) -> int:
    return log.read_text().count('"event":"run_end"') if log.is_file() else 0


def _check(tmp_path: Path, provider: FakeProvider, out: Path) -> None:
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["line"] for r in results] == list(range(1, N + 1))
    assert all(r["status"] == "completed" for r in results), [r for r in results if r["status"] != "completed"][:1]
    assert len({r["run_id"] for r in results}) == N
    log = records(tmp_path / "runs.jsonl")
    for r in results:
        mine = [x for x in log if x["correlation_id"] == r["run_id"]]
        assert [x["event"] for x in mine].count("run_start") == 1
        assert [x["event"] for x in mine].count("run_end") == 1
        assert [x["seq"] for x in mine] == list(range(len(mine)))
    # every run made its 4 calls once; a call is sent again only when the kill caught it in flight (≤ 8 runs at once)
    assert N * len(KINDS) <= provider.requests <= N * len(KINDS) + 8


def test_batch_killed_halfway_and_restarted_runs_each_request_once(tmp_path: Path) -> None:
    killed_and_restarted(tmp_path)


def killed_and_restarted(tmp_path: Path, database_url: str | None = None) -> None:
    requests, out = _batch_file(tmp_path), tmp_path / "results.jsonl"
    with serving(FakeProvider(kinds=KINDS)) as provider:
        llm = {"adapter": "openai", "base_url": provider.url, "model": "fake"}
        cfg = config(tmp_path, "batch.yaml", llm, database_url=database_url)
        args = ("batch", requests, "--concurrency", "8", "--config", cfg, "--out", out)
        proc = start(tmp_path, *args)
        try:
            wait_for(lambda: _ended(tmp_path / "runs.jsonl") >= N // 2, timeout=300, what="half the batch")
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        finally:
            proc.kill()
        assert not out.exists()
        assert _ended(tmp_path / "runs.jsonl") < N
        again = aeon(tmp_path, *args, timeout=600)
        assert again.returncode == 0, again.stderr[-2000:]
        progress = again.stderr.splitlines()
        assert any(line.startswith(f"batch: {N}/{N} done · 0 running · 0 failed") for line in progress), progress[-3:]
        _check(tmp_path, provider, out)


def test_two_workers_on_one_sqlite_file_serve_a_batch(tmp_path: Path) -> None:
    two_workers(tmp_path)


def two_workers(tmp_path: Path, database_url: str | None = None) -> None:
    requests, out = _batch_file(tmp_path), tmp_path / "results.jsonl"
    with serving(FakeProvider(kinds=KINDS)) as provider:
        llm = {"adapter": "openai", "base_url": provider.url, "model": "fake"}
        cfg = config(tmp_path, "batch.yaml", llm, database_url=database_url)
        workers = [start(tmp_path, "worker", "--name", f"w{i}", "--config", cfg) for i in (1, 2)]
        try:
            done = aeon(
                tmp_path, "batch", requests, "--concurrency", "8", "--config", cfg, "--out", out, "--no-serve",
                timeout=600,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-2000:]
        finally:
            for w in workers:
                w.send_signal(signal.SIGTERM)
            for w in workers:
                w.wait(30)
        _check(tmp_path, provider, out)
    listed = json.loads(aeon(tmp_path, "runs", "--json", "--config", cfg).stdout)
    assert len(listed) == 100 and all(r["status"] == "completed" for r in listed)  # the most recent 100


@pytest.mark.parametrize("line", ['{"request": ""}', "not json", '{"ask": "x"}'])
def test_a_bad_batch_line_is_named_with_its_number(tmp_path: Path, line: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"request": "fine"}\n\n' + line + "\n")
    done = aeon(tmp_path, "batch", bad)
    assert done.returncode == 2
    assert done.stderr.startswith(f"aeon: {bad}:3: ")
    assert len(done.stderr.strip().splitlines()) == 1
