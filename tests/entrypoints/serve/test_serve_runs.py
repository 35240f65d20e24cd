"""`aeon serve`'s runs API over real HTTP: a run POSTed is queued and ends on the record; what a client may not set
is refused, naming it."""

from __future__ import annotations

import time
from typing import Any

from durable_harness import runs
from serve_harness import REQUEST, Server


def _ended(server: Server, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [r for r in runs(server.folder) if r["id"] == run_id]
        if found and found[0]["status"] not in ("queued", "pending", "running"):
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not end")


def test_a_posted_run_is_queued_202_and_runs_to_its_end(served: Server) -> None:
    with served.client() as http:
        answer = http.post("/runs", json={"request": REQUEST, "ttl": 1})

    assert answer.status_code == 202, answer.text
    assert _ended(served, answer.json()["run_id"])["status"] == "completed"


def test_an_option_the_server_does_not_allow_is_refused_400_naming_it(served: Server) -> None:
    with served.client() as http:
        for field in ("tools", "llm", "model", "base_url"):
            answer = http.post("/runs", json={"request": REQUEST, field: "x"})
            assert answer.status_code == 400, answer.text
            assert repr(field) in answer.json()["error"]["message"]
