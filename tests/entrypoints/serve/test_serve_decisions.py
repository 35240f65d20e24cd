"""Runs that wait for a person, through `aeon serve` on the approval demo: the call waited on is shown; a decision
over HTTP (approve with edited arguments, or deny with a reason) is the same operation as `aeon approve`, which
works from another process too; a run can be cancelled while it waits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from durable_harness import aeon
from serve_harness import CONFIG, Server, start
from test_serve_runs import GOING, ended

PUBLISH = "publish the release notes"


@pytest.fixture(scope="module")
def approving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder: Path = tmp_path_factory.mktemp("serve-approval")
    server = start(folder, "--config", CONFIG / "scripted-approval.yaml")
    yield server
    server.stop()


def waiting(server: Server) -> str:
    with server.client() as http:
        run_id: str = http.post("/runs", json={"request": PUBLISH}).json()["run_id"]
        doc = ended(http, run_id)
    assert doc["status"] == "awaiting_approval", doc
    assert doc["awaiting"]["tool"] == "publish" and doc["awaiting"]["args"]["channel"] == "news"
    return run_id


def test_approved_over_http_with_edited_arguments_the_run_goes_on_with_them(approving: Server) -> None:
    run_id = waiting(approving)
    with approving.client() as http:
        bad = http.post(f"/runs/{run_id}/decisions", json={"verdict": "approve", "args": {"title": 3}})
        answer = http.post(
            f"/runs/{run_id}/decisions", json={"verdict": "approve", "args": {"title": "Edited", "channel": "web"}}
        )
        doc = ended(http, run_id, (*GOING, "awaiting_approval"))
        again = http.post(f"/runs/{run_id}/decisions", json={"verdict": "deny", "reason": "late"})

    assert bad.status_code == 400 and "'args' do not fit tool 'publish'" in bad.json()["error"]["message"]
    assert answer.status_code == 202 and doc["status"] == "completed"
    assert "web: Edited" in (approving.folder / "published.txt").read_text()
    assert again.status_code == 400 and "AEON.APPROVAL" in again.json()["error"]["code"]


def test_denied_over_http_with_a_reason_the_run_ends_denied(approving: Server) -> None:
    run_id = waiting(approving)
    with approving.client() as http:
        nothing = http.post(f"/runs/{run_id}/decisions", json={"verdict": "deny"})
        http.post(f"/runs/{run_id}/decisions", json={"verdict": "deny", "reason": "not today", "by": "ana"})
        doc = ended(http, run_id, (*GOING, "awaiting_approval"))

    assert nothing.status_code == 400 and "a denial needs a reason" in nothing.json()["error"]["message"]
    assert doc["status"] == "denied" and "not today" in doc["result"]["error"]["message"]


def test_aeon_approve_from_another_process_finishes_a_run_the_server_holds(approving: Server) -> None:
    run_id = waiting(approving)
    done = aeon(approving.folder, "approve", run_id, "--config", CONFIG / "scripted-approval.yaml", "--json")

    assert done.returncode == 0, done.stderr
    with approving.client() as http:
        assert ended(http, run_id, (*GOING, "awaiting_approval"))["status"] == "completed"


def test_a_waiting_run_is_cancelled_and_stays_cancelled(approving: Server) -> None:
    run_id = waiting(approving)
    with approving.client() as http:
        answer = http.post(f"/runs/{run_id}/cancel")
        doc = ended(http, run_id, (*GOING, "awaiting_approval"))
        unknown = http.post("/runs/no-such-run/cancel")

    assert answer.status_code == 202 and doc["status"] == "cancelled" and unknown.status_code == 404
