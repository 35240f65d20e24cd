"""The A2A and AG-UI doors mounted in a real `aeon serve` process (behind its guard): the official a2a-sdk client
reads the card and streams a message's task to completion; an AG-UI client's POST /agui streams the run."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import get_artifact_text, new_text_message
from a2a.types import Role, SendMessageRequest, TaskState
from ag_ui.core import Event, EventType
from pydantic import TypeAdapter
from serve_harness import REQUEST, Server


def test_a2a_in_aeon_serve_streams_a_task_to_completion(served: Server) -> None:
    async def go() -> tuple[Any, list[Any]]:
        async with httpx.AsyncClient(timeout=60) as http:
            client = await create_client(served.url, ClientConfig(streaming=True, httpx_client=http))
            message = new_text_message(REQUEST, role=Role.ROLE_USER)
            return client, [r async for r in client.send_message(SendMessageRequest(message=message))]

    _, responses = asyncio.run(go())
    states = [r.status_update.status.state for r in responses if r.HasField("status_update")]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert [get_artifact_text(r.artifact_update.artifact) for r in responses if r.HasField("artifact_update")] == [
        "The sum of 5 and 10 is 15."
    ]
    card = httpx.get(f"{served.url}/.well-known/agent-card.json", timeout=30).json()
    assert "calculator" in {s["id"] for s in card["skills"]}


def test_agui_in_aeon_serve_streams_a_run(served: Server) -> None:
    body = {"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", "content": REQUEST}],
            "tools": [], "context": [], "state": {}, "forwardedProps": {}}  # fmt: skip
    events = []
    with httpx.stream("POST", f"{served.url}/agui", json=body, timeout=60) as response:
        assert response.status_code == 200, response.read()
        events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    parsed = [TypeAdapter(Event).validate_python(e) for e in events]
    assert parsed[0].type is EventType.RUN_STARTED and parsed[-1].type is EventType.RUN_FINISHED


def test_a_queued_run_streams_as_agui_events_from_the_record(served: Server) -> None:
    with served.client() as http:
        run_id = http.post("/runs", json={"request": REQUEST}).json()["run_id"]
        with http.stream("GET", f"/runs/{run_id}/agui") as response:
            assert response.status_code == 200
            lines = [json.loads(x[6:]) for x in response.iter_lines() if x.startswith("data: ")]
        assert http.get("/runs/no-such-run/agui").status_code == 404
    events = [TypeAdapter(Event).validate_python(e) for e in lines]
    assert events[0].type is EventType.RUN_STARTED and events[0].run_id == run_id
    assert events[-1].type is EventType.RUN_FINISHED and events[-1].outcome.type == "success"
    assert EventType.TOOL_CALL_RESULT in [e.type for e in events]
