"""`aeon serve`'s runs API over real HTTP, one server on the scripted demo: a run POSTed is queued (202) and ends
with the result `aeon run --json` gives; runs are listed in pages; a run's audit records stream as server-sent
events to its end and again from a Last-Event-ID; what a client may not set, an oversized body, a request from
another site or to another host name are refused."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from durable_harness import aeon, comparable
from serve_harness import CONFIG, REQUEST, Server

GOING = ("queued", "pending", "running")


def ended(http: httpx.Client, run_id: str, going: tuple[str, ...] = GOING) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        doc: dict[str, Any] = http.get(f"/runs/{run_id}").json()
        if doc["status"] not in going:
            return doc
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not end")


def posted(http: httpx.Client, headers: dict[str, str] | None = None, **options: Any) -> str:
    answer = http.post("/runs", json={"request": REQUEST, **options}, headers=headers)
    assert answer.status_code == 202, answer.text
    run_id: str = answer.json()["run_id"]
    return run_id


def events(http: httpx.Client, run_id: str, last: int | None = None) -> list[tuple[str, str, str]]:
    """(event, id, data) of the whole stream."""
    headers = {"last-event-id": str(last)} if last is not None else {}
    found, event, ident = [], "", ""
    with http.stream("GET", f"/runs/{run_id}/events", headers=headers) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("id: "):
                ident = line.removeprefix("id: ")
            elif line.startswith("data: "):
                found.append((event, ident, line.removeprefix("data: ")))
                event, ident = "", ""
    return found


def test_a_posted_run_is_queued_and_ends_with_the_result_aeon_run_json_gives(served: Server) -> None:
    with served.client() as http:
        doc = ended(http, posted(http))

    assert doc["status"] == "completed" and doc["request"] == REQUEST and doc["awaiting"] is None
    cli = aeon(served.folder, "run", REQUEST, "--config", CONFIG / "scripted-demo.yaml", "--json", "--quiet")
    assert comparable(doc["result"]) == comparable(json.loads(cli.stdout))


def test_runs_are_listed_newest_first_in_pages_and_by_status(served: Server) -> None:
    with served.client() as http:
        ids = [posted(http) for _ in range(3)]
        for run_id in ids:
            ended(http, run_id)
        whole = [r["run_id"] for r in http.get("/runs", params={"limit": 100}).json()["runs"]]
        first = http.get("/runs", params={"limit": 2}).json()
        second = http.get("/runs", params={"limit": 2, "cursor": first["next"]}).json()
        completed = http.get("/runs", params={"status": "completed", "limit": 100}).json()
        none = http.get("/runs", params={"status": "awaiting_approval"}).json()
        bad = http.get("/runs", params={"limit": 0})

    assert [r for r in whole if r in ids] == ids[::-1]  # runs of other doors in the same second may sort among them
    assert [r["run_id"] for r in first["runs"] + second["runs"]] == whole[:4]
    assert set(ids) <= {r["run_id"] for r in completed["runs"]} and none == {"runs": [], "next": None}
    assert bad.status_code == 400 and "'limit'" in bad.json()["error"]["message"]


def test_a_run_s_records_stream_to_its_end_and_again_after_a_last_event_id(served: Server) -> None:
    with served.client() as http:
        run_id = posted(http)
        whole = events(http, run_id)
        again = events(http, run_id, last=4)
        unknown = http.get("/runs/no-such-run/events")

    records = [(kind, ident, json.loads(data)) for kind, ident, data in whole[:-1]]
    assert [int(ident) for _, ident, _ in records] == list(range(len(records)))
    assert records[0][0] == "run_start" and records[-1][0] == "run_end" and whole[-1][0] == "end"
    assert all(r["correlation_id"] == run_id and r["event"] == kind for kind, _, r in records)
    assert [ident for _, ident, _ in again[:-1]] == [ident for _, ident, _ in whole[5:-1]]
    assert unknown.status_code == 404


def test_what_a_client_may_not_set_is_refused_400_naming_it(served: Server) -> None:
    with served.client() as http:
        for field in ("tools", "llm", "model", "base_url", "api_key", "max_seconds"):
            answer = http.post("/runs", json={"request": REQUEST, field: "x"})
            assert answer.status_code == 400, answer.text
            assert repr(field) in answer.json()["error"]["message"]
        wrong = http.post("/runs", json={"request": REQUEST, "ttl": "many"})
        assert wrong.status_code == 400 and "'ttl'" in wrong.json()["error"]["message"]
        twice = http.post("/runs", content=b'{"request": "a", "request": "b"}')
        assert twice.status_code == 400 and "names 'request' twice" in twice.json()["error"]["message"]


def test_an_oversized_body_is_refused_413_before_it_is_read(served: Server) -> None:
    with served.client() as http:
        answer = http.post("/runs", json={"request": "x" * 70_000})
        chunked = http.post("/runs", content=iter([b'{"request": "', b"x" * 70_000, b'"}']))

    assert answer.status_code == chunked.status_code == 413
    assert "at most 64000 bytes" in answer.text


def test_a_request_from_another_site_or_to_another_host_name_is_refused(served: Server) -> None:
    with served.client() as http:
        cross = http.post("/runs", json={"request": REQUEST}, headers={"origin": "https://evil.example"})
        rebound = http.get("/runs", headers={"host": "evil.example"})
        listed = http.get("/runs")

    assert cross.status_code == 403 and rebound.status_code == 421 and listed.status_code == 200


def test_aeon_ui_s_pages_are_mounted_at_ui_with_every_address_under_it(served: Server) -> None:
    with served.client() as http:
        run_id = posted(http)
        ended(http, run_id)
        index = http.get("/ui/")
        page = http.get(f"/ui/runs/{run_id}")
        style = http.get("/ui/static/aeon.css")

    assert index.status_code == page.status_code == style.status_code == 200
    assert f'href="/ui/runs/{run_id}"' in index.text and 'href="/ui/static/aeon.css"' in index.text
    assert 'href="/"' not in index.text + page.text and 'href="/runs' not in index.text + page.text
