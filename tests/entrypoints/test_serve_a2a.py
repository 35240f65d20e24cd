"""aeon serve's A2A door over real HTTP, driven by the official a2a-sdk client: the agent card lists the tools, a
message streams its task to completion, a v0.3 client's message/send works, and a run whose tool call waits for a
person is an input-required task that the reply 'approve' carries on to completion."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers import get_artifact_text, get_message_text, new_text_message
from a2a.types import Role, SendMessageRequest, StreamResponse, TaskState
from starlette.applications import Starlette

from aeon.entrypoints.serve.a2a import config_routes

from a2a_harness import serve

CONFIG = Path(__file__).parents[2] / "config"


@pytest.fixture
def simple(isolated_env: None) -> Iterator[str]:
    app = Starlette(routes=config_routes(lambda: CONFIG / "scripted-simple-request.yaml"))
    with serve(lambda url: app) as url:
        yield url


async def send(url: str, text: str, *, streaming: bool, task_id: str | None = None) -> list[StreamResponse]:
    async with httpx.AsyncClient(timeout=60) as http:
        client = await create_client(url, ClientConfig(streaming=streaming, httpx_client=http))
        message = new_text_message(text, role=Role.ROLE_USER, task_id=task_id)
        return [r async for r in client.send_message(SendMessageRequest(message=message))]


def test_the_agent_card_lists_the_tools_as_skills(simple: str) -> None:
    async def card() -> object:
        async with httpx.AsyncClient() as http:
            return await A2ACardResolver(http, simple).get_agent_card()

    found = asyncio.run(card())
    assert {s.id for s in found.skills} >= {"calculator"}  # type: ignore[attr-defined]
    assert found.capabilities.streaming  # type: ignore[attr-defined]
    assert found.supported_interfaces[0].url == f"{simple}/a2a"  # type: ignore[attr-defined]


def test_a_message_streams_its_task_to_completion(simple: str) -> None:
    responses = asyncio.run(send(simple, "calculate the sum of 5 and 10", streaming=True))
    states = [r.status_update.status.state for r in responses if r.HasField("status_update")]
    assert states[0] == TaskState.TASK_STATE_WORKING and states[-1] == TaskState.TASK_STATE_COMPLETED
    said = [get_message_text(r.status_update.status.message) for r in responses if r.HasField("status_update")]
    assert any("calculator" in line for line in said)  # progress: the plan and its steps, as aeon run shows them
    artifacts = [get_artifact_text(r.artifact_update.artifact) for r in responses if r.HasField("artifact_update")]
    assert artifacts == ["15"]


def test_a_v0_3_client_sends_message_send_and_message_stream(simple: str) -> None:
    message = {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": "calculate the sum of 5 and 10"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    card = httpx.get(f"{simple}/.well-known/agent-card.json", timeout=10).json()
    assert card["url"] == f"{simple}/a2a" and card["protocolVersion"] == "0.3"  # what a v0.3 client reads
    answer = httpx.post(f"{simple}/a2a", json=body, timeout=60).json()
    assert answer["result"]["status"]["state"] == "completed"
    assert answer["result"]["artifacts"][0]["parts"][0]["text"] == "15"
    body["method"] = "message/stream"
    with httpx.stream("POST", f"{simple}/a2a", json=body, timeout=60) as response:
        events = [json.loads(x[5:])["result"] for x in response.iter_lines() if x.startswith("data:")]
    assert events[-1]["kind"] == "status-update" and events[-1]["final"] is True
    assert events[-1]["status"]["state"] == "completed"


def test_a_call_waiting_for_approval_makes_the_task_input_required(isolated_env: None, tmp_path: Path) -> None:
    app = Starlette(routes=config_routes(lambda: CONFIG / "scripted-approval.yaml"))
    with serve(lambda url: app) as url:
        first = asyncio.run(send(url, "publish the release notes", streaming=False))
        task = first[-1].task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert "waits for approval to call publish" in get_message_text(task.status.message)
        assert not (tmp_path / "published.txt").exists()
        done = asyncio.run(send(url, "approve", streaming=False, task_id=task.id))[-1].task
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert (tmp_path / "published.txt").read_text() == "news: Release 1.2 notes\n"


def test_a_denial_in_reply_rejects_the_task_and_the_call_is_never_made(isolated_env: None, tmp_path: Path) -> None:
    app = Starlette(routes=config_routes(lambda: CONFIG / "scripted-approval.yaml"))
    with serve(lambda url: app) as url:
        task = asyncio.run(send(url, "publish the release notes", streaming=False))[-1].task
        again = asyncio.run(send(url, "perhaps", streaming=False, task_id=task.id))[-1].task
        assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED  # neither approve nor deny: asked again
        done = asyncio.run(send(url, "deny: not today", streaming=False, task_id=task.id))[-1].task
    assert done.status.state == TaskState.TASK_STATE_REJECTED
    assert "not today" in get_message_text(done.status.message)
    assert not (tmp_path / "published.txt").exists()
