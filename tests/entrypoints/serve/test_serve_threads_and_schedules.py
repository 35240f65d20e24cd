"""`aeon serve`'s threads and schedules over real HTTP: a run POSTed in a thread leaves its turn there and the next
one is given the conversation so far; threads are listed, read and deleted; schedules are added, listed, paused,
resumed and removed, a cron that is not one refused 400, and a schedule fires runs on the server's queue."""

from __future__ import annotations

import time
from typing import Any

import msgspec
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


def _recorded_conversation(server: Server, run_id: str) -> str:
    from dbos import DBOSClient

    client = DBOSClient(system_database_url=f"sqlite:///{server.folder / '.aeon' / 'aeon.sqlite'}")
    try:
        spec = msgspec.json.decode(client.list_workflows(workflow_ids=[run_id])[0].input["args"][0])
    finally:
        client.destroy()
    return str(spec["thread"]["conversation"])


def test_a_thread_made_over_http_remembers_its_runs_and_is_deleted(served: Server) -> None:
    with served.client() as http:
        made = http.post("/threads", json={"name": "calc"})
        assert made.status_code == 201 and made.json()["turns"] == [], made.text
        first = http.post("/runs", json={"request": REQUEST, "thread": "calc"}).json()["run_id"]
        assert _ended(served, first)["status"] == "completed"
        turns = http.get("/threads/calc").json()["turns"]
        assert [(t["run_id"], t["status"], t["request"]) for t in turns] == [(first, "completed", REQUEST)]

        second = http.post("/runs", json={"request": "and now double it", "thread": "calc"}).json()["run_id"]
        assert _ended(served, second)["status"] == "completed"
        said = _recorded_conversation(served, second)  # what the follow-up's planner was shown
        assert said.startswith(f"Earlier request: {REQUEST}\nEarlier answer: {turns[0]['answer']}")
        listed = http.get("/threads").json()["threads"]
        assert [(t["name"], t["turns"]) for t in listed if t["name"] == "calc"] == [("calc", 2)]

        assert http.delete("/threads/calc").json() == {"deleted": "calc"}
        gone = http.get("/threads/calc")
        assert gone.status_code == 404 and "no thread named 'calc'" in gone.json()["error"]["message"]
        assert http.delete("/threads/calc").status_code == 404
        for bad in (7, "../etc"):
            refused = http.post("/runs", json={"request": REQUEST, "thread": bad})
            assert refused.status_code == 400 and "thread" in refused.json()["error"]["message"]


def test_schedules_over_http_are_added_listed_paused_resumed_and_removed(served: Server) -> None:
    with served.client() as http:
        added = http.post("/schedules", json={"cron": "0 7 * * *", "request": REQUEST, "name": "daily"})
        assert added.status_code == 201 and added.json()["cron"] == "0 7 * * *", added.text
        bad = http.post("/schedules", json={"cron": "61 7 * * *", "request": REQUEST})
        assert bad.status_code == 400 and "is not a cron expression" in bad.json()["error"]["message"]

        def state() -> list[tuple[str, bool]]:
            return [(s["name"], s["paused"]) for s in http.get("/schedules").json()["schedules"]]

        assert state() == [("daily", False)]
        assert http.post("/schedules/daily/pause").json() == {"schedule": "daily", "status": "paused"}
        assert state() == [("daily", True)]
        assert http.post("/schedules/daily/resume").status_code == 200 and state() == [("daily", False)]
        assert http.delete("/schedules/daily").json() == {"schedule": "daily", "status": "removed"}
        assert state() == [] and http.delete("/schedules/daily").status_code == 404


def test_a_schedule_fires_ordinary_runs_on_the_servers_queue(served: Server) -> None:
    with served.client() as http:
        added = http.post("/schedules", json={"cron": "* * * * * *", "request": REQUEST, "name": "tick"})
        assert added.status_code == 201, added.text
        deadline = time.monotonic() + 60
        try:
            while not any(r["id"].startswith("schedule-tick-") for r in runs(served.folder)):
                assert time.monotonic() < deadline, "the schedule never fired"
                time.sleep(0.2)
        finally:
            assert http.delete("/schedules/tick").status_code == 200
    fired = next(r for r in runs(served.folder) if r["id"].startswith("schedule-tick-"))
    assert _ended(served, fired["id"])["status"] == "completed" and fired["request"] == REQUEST
