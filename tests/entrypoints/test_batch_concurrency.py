"""`aeon batch --concurrency N` against one model server keeps N calls in flight at once, never more: a local
server's slots are all kept busy (bench/local_batch.py measures the throughput that gives)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import yaml
from durable_harness import config, runs, start, wait_for
from fake_provider import FakeProvider, serving

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = yaml.safe_load((ROOT / "config/scripts/sum-5-and-10.yaml").read_text())["responses"]
KINDS = dict(zip(["profile_and_plan", "step_result", "evaluation"], SCRIPT, strict=True))


class Gauge(FakeProvider):
    """Counts the calls in flight, and holds each one until `go` is set."""

    def __init__(self) -> None:
        super().__init__(kinds=KINDS)
        self.now = self.peak = 0
        self._gauge = threading.Lock()
        self.go = threading.Event()

    def answer_for(self, body: bytes) -> str:
        with self._gauge:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            self.go.wait(120)
            return super().answer_for(body)
        finally:
            with self._gauge:
                self.now -= 1


def test_a_batch_keeps_as_many_runs_calling_as_its_concurrency_and_no_more(tmp_path: Path) -> None:
    requests, out = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    requests.write_text(
        "".join(json.dumps({"request": f"calculate the sum of 5 and 10 (#{i})"}) + "\n" for i in range(9))
    )
    with serving(Gauge()) as provider:
        cfg = config(tmp_path, "batch.yaml", {"adapter": "openai", "base_url": provider.url, "model": "fake"})
        batch = start(tmp_path, "batch", requests, "--concurrency", "3", "--config", cfg, "--out", out)
        try:
            wait_for(lambda: provider.now == 3, timeout=120, what="three calls in flight")
            statuses = Counter(run["status"] for run in runs(tmp_path))  # meanwhile: the others wait their turn
            provider.go.set()
            assert batch.wait(300) == 0, batch.communicate()[1][-2000:]
        finally:
            batch.kill()
    assert statuses == {"running": 3, "queued": 6}, statuses
    assert provider.peak == 3  # three runs' calls at once: the server's slots busy, a fourth would wait for one
    assert [json.loads(line)["status"] for line in out.read_text().splitlines()] == ["completed"] * 9
