"""What the OpenAPI document of `aeon serve` shows of its other route groups: threads, schedules, and the A2A and
AG-UI doors (whose bodies are the protocols' own: shown by their required fields, the rest allowed)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from pydantic import BaseModel, ConfigDict, Field

from aeon.application.runs.openapi import Answers, Error, Operation
from aeon.application.runs.serving import ServeSettings
from aeon.domain.schedules import Schedule
from aeon.domain.threads import Thread, ThreadSummary


class NewThread(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="letters, digits, '.', '_' and '-'; a run joins it with POST /runs 'thread'")


class ThreadList(msgspec.Struct):
    threads: list[ThreadSummary]


class Deleted(BaseModel):
    deleted: str


class NewSchedule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cron: str = Field(description="five fields, as cron reads them: '0 7 * * *'")
    request: str
    name: str | None = None


class ScheduleList(msgspec.Struct):
    schedules: list[Schedule]


class ScheduleState(BaseModel):
    schedule: str
    status: Literal["paused", "active", "removed"]


class AgentCard(BaseModel):
    """The A2A agent card (the a2a-sdk's AgentCard): Aeon's skills are its registered tools."""

    model_config = ConfigDict(extra="allow")
    name: str
    description: str
    skills: list[dict[str, Any]]


class JsonRpcRequest(BaseModel):
    """An A2A JSON-RPC request: SendMessage, SendStreamingMessage (message/send, message/stream for v0.3 clients),
    GetTask, CancelTask …; the answer is JSON-RPC, or server-sent events for a streaming method."""

    model_config = ConfigDict(extra="allow")
    jsonrpc: Literal["2.0"]
    method: str
    id: str | int | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class RunAgentInput(BaseModel):
    """AG-UI's RunAgentInput: the last user message is the request, threadId the run's thread, `resume` answers an
    interrupt."""

    model_config = ConfigDict(extra="allow")
    threadId: str
    runId: str
    messages: list[dict[str, Any]]


def threads_operations(_: ServeSettings) -> list[Operation]:
    """The threads API (entrypoints/serve/threads.py)."""
    one: Answers = {200: Thread, 404: Error}
    return [
        Operation("POST", "/threads", "Make a thread", NewThread, {201: Thread, 400: Error}),
        Operation("GET", "/threads", "Threads, with their turns and last update", None, {200: ThreadList}),
        Operation("GET", "/threads/{name}", "A thread: its turns and memory", None, one),
        Operation(
            "DELETE", "/threads/{name}", "Delete a thread and everything it stored", None, {200: Deleted, 404: Error}
        ),
    ]


def schedules_operations(_: ServeSettings) -> list[Operation]:
    """The schedules API (entrypoints/serve/schedules.py)."""
    changed: Answers = {200: ScheduleState, 404: Error}
    return [
        Operation("POST", "/schedules", "Add a schedule", NewSchedule, {201: Schedule, 400: Error}),
        Operation("GET", "/schedules", "The schedules", None, {200: ScheduleList}),
        Operation("POST", "/schedules/{name}/pause", "Pause a schedule", None, changed),
        Operation("POST", "/schedules/{name}/resume", "Resume a paused schedule", None, changed),
        Operation("DELETE", "/schedules/{name}", "Remove a schedule", None, changed),
    ]


def a2a_operations(_: ServeSettings) -> list[Operation]:
    """The A2A door (entrypoints/serve/a2a.py; the [serve] extra)."""
    return [
        Operation("GET", "/.well-known/agent-card.json", "The A2A agent card", None, {200: AgentCard}),
        Operation("POST", "/a2a", "A2A JSON-RPC: a message is a run in its context's thread", JsonRpcRequest, {}),
    ]


def agui_operations(_: ServeSettings) -> list[Operation]:
    """The AG-UI door (entrypoints/serve/agui.py; the [serve] extra)."""
    summary = "A run of the last user message as AG-UI events (server-sent)"
    recorded = "A run on the record as AG-UI events (server-sent)"
    return [
        Operation("POST", "/agui", summary, RunAgentInput, {400: Error}, stream=True),
        Operation("GET", "/runs/{run_id}/agui", recorded, None, {404: Error}, stream=True),
    ]
