"""aeon serve's AG-UI door over real HTTP: POST /agui with a RunAgentInput streams the run as server-sent events that
parse with ag-ui-protocol's own types, RUN_STARTED first and RUN_FINISHED last; a bad input is refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import Event, EventType, RunAgentInput, UserMessage
from pydantic import TypeAdapter
from starlette.applications import Starlette

import aeon
from aeon.adapters.protocols.agui_routes import recorded_routes
from aeon.entrypoints.serve.agui import config_routes

from a2a_harness import serve
from cli_harness import invoke

CONFIG = Path(__file__).parents[2] / "config"
EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


@pytest.fixture
def url(isolated_env: None) -> Iterator[str]:
    app = Starlette(routes=config_routes(lambda: CONFIG / "scripted-simple-request.yaml"))
    with serve(lambda base: app) as base:
        yield base


def run_input(text: str) -> dict[str, Any]:
    given = RunAgentInput(
        thread_id="t1", run_id="r1", messages=[UserMessage(id="m1", content=text)], tools=[], context=[], state={}
    )
    return given.model_dump(mode="json", by_alias=True, exclude_none=True)


def streamed(url: str, body: dict[str, Any]) -> list[Any]:
    events = []
    with httpx.stream("POST", f"{url}/agui", json=body, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(EVENTS.validate_python(json.loads(line.removeprefix("data: "))))
    return events


def test_a_run_streams_as_agui_events_from_run_started_to_run_finished(url: str) -> None:
    events = streamed(url, run_input("calculate the sum of 5 and 10"))
    kinds = [e.type for e in events]
    assert kinds[0] is EventType.RUN_STARTED and events[0].run_id == "r1" and events[0].thread_id == "t1"
    assert kinds[-1] is EventType.RUN_FINISHED and events[-1].outcome.type == "success"
    for kind in (EventType.STATE_SNAPSHOT, EventType.STEP_STARTED, EventType.TOOL_CALL_START, EventType.STEP_FINISHED):
        assert kind in kinds
    result = next(e for e in events if e.type is EventType.TOOL_CALL_RESULT)
    assert result.content == "15"
    assert [e.delta for e in events if e.type is EventType.TEXT_MESSAGE_CONTENT] == ["15"]


def test_a_request_the_run_refuses_ends_the_stream_with_run_error(url: str) -> None:
    events = streamed(url, run_input("   "))
    assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.RUN_ERROR]


def test_an_input_that_is_not_a_run_agent_input_is_refused(url: str) -> None:
    answer = httpx.post(f"{url}/agui", json={"threadId": "t"}, timeout=10)
    assert answer.status_code == 422 and "RunAgentInput" in answer.json()["error"]
    no_user = run_input("x") | {"messages": []}
    assert httpx.post(f"{url}/agui", json=no_user, timeout=10).status_code == 400


def test_a_recorded_run_streams_as_agui_events_from_its_records(isolated_env: None, tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    config = CONFIG / "scripted-simple-request.yaml"
    run_id = aeon.run("calculate the sum of 5 and 10", config=config, log_file=str(log)).correlation_id

    def look(run: str, after: int) -> tuple[bool, list[dict[str, Any]]] | None:
        records = [json.loads(line) for line in log.read_text().splitlines()]
        mine = [r for r in records if r.get("correlation_id") == run]
        return (True, [r for r in mine if r["seq"] > after]) if mine else None

    app = Starlette(routes=recorded_routes(look, most_seconds=30, most_records=10_000))
    with serve(lambda base: app) as base:
        events = []
        with httpx.stream("GET", f"{base}/runs/{run_id}/agui", timeout=60) as response:
            assert response.status_code == 200
            events = [
                EVENTS.validate_python(json.loads(x[6:])) for x in response.iter_lines() if x.startswith("data: ")
            ]
        assert httpx.get(f"{base}/runs/no-such-run/agui", timeout=10).status_code == 404
    kinds = [e.type for e in events]
    assert kinds[0] is EventType.RUN_STARTED and kinds[-1] is EventType.RUN_FINISHED
    assert EventType.TOOL_CALL_RESULT in kinds
    few = Starlette(routes=recorded_routes(look, most_seconds=30, most_records=2))  # bounded: 2 records, no end
    with serve(lambda base: few) as base, httpx.stream("GET", f"{base}/runs/{run_id}/agui", timeout=60) as response:
        cut = [json.loads(x[6:])["type"] for x in response.iter_lines() if x.startswith("data: ")]
    assert cut[0] == "RUN_STARTED" and "RUN_FINISHED" not in cut


def test_a_call_waiting_for_approval_interrupts_and_a_resume_carries_the_run_on(
    isolated_env: None, tmp_path: Path
) -> None:
    app = Starlette(routes=config_routes(lambda: CONFIG / "scripted-approval.yaml"))
    with serve(lambda base: app) as base:
        first = streamed(base, run_input("publish the release notes"))
        assert first[-1].type is EventType.RUN_FINISHED and first[-1].outcome.type == "interrupt"
        (interrupt,) = first[-1].outcome.interrupts
        assert interrupt.reason == "approval" and not (tmp_path / "published.txt").exists()
        resume = run_input("publish the release notes") | {"runId": "r2"}
        resume["resume"] = [{"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": True}}]
        second = streamed(base, resume)
        again = httpx.post(f"{base}/agui", json=resume, timeout=10)  # answered already: nothing waits on it
    assert second[0].type is EventType.RUN_STARTED and second[0].run_id == "r2"
    assert second[-1].type is EventType.RUN_FINISHED and second[-1].outcome.type == "success"
    assert (tmp_path / "published.txt").read_text() == "news: Release 1.2 notes\n"
    assert again.status_code == 404


def test_the_agui_thread_id_is_the_runs_thread(isolated_env: None, forget_imports: None) -> None:
    app = Starlette(routes=config_routes(lambda: CONFIG / "scripted-thread.yaml"))
    with serve(lambda base: app) as base:
        body = run_input("multiply 6 by 7") | {"threadId": "calc"}
        events = streamed(base, body)
    assert events[-1].type is EventType.RUN_FINISHED and str(events[-1].result["answer"]) == "42"
    shown = invoke("threads", "show", "calc")
    assert "multiply 6 by 7" in shown.stdout, shown.stdout + shown.stderr
