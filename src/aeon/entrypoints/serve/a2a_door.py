"""`aeon serve`'s Agent2Agent door, built with the a2a-sdk's server: the agent card at the protocol's well-known
path, JSON-RPC at /a2a (SendMessage, SendStreamingMessage; message/send and message/stream for v0.3 clients). A
message starts a run in its context (the thread); its events become the task's status updates, its answer an
artifact; a call waiting for approval makes the task input-required, and the reply ('approve', 'deny: why') goes on."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from a2a.helpers import get_message_text, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCard, Task, TaskState, TaskStatus
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from google.protobuf.json_format import ParseDict
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from aeon.application.errors import UsageError
from aeon.application.results import RunEnded
from aeon.application.runs.answers import answer
from aeon.application.views.a2a import (
    agent_card,
    answer_text,
    approval_question,
    approval_reply,
    ending_text,
    progress_text,
    task_state,
)
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Verdict
from aeon.domain.progress import ApprovalRequested, ProgressEvent
from aeon.domain.tools import ToolSpec
from aeon.entrypoints.serve.held import Held

RPC_PATH = "/a2a"
Events = AsyncIterator[ProgressEvent | RunEnded]
# a run's events for a request in a context (the thread); the run use case behind it (aeon.stream's)
Source = Callable[[str, str | None], Events]


class RunExecutor(AgentExecutor):
    """The A2A agent: each new task is one run of its message, from `source`; a task waiting for approval keeps its
    run's events here until the reply comes (the run itself waits as long as run.approval_timeout says)."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._waiting: Held[ApprovalRequest] = Held()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.task_id is not None and context.context_id is not None
        text = get_message_text(context.message)
        # a reply to a task belongs to the task's context, whatever the message said
        known = context.current_task
        updater = TaskUpdater(event_queue, context.task_id, known.context_id if known else context.context_id)
        waiting = self._waiting.take(context.task_id)
        if waiting is not None:
            await self._replied(*waiting, text, updater)
            return
        task = Task(id=context.task_id, context_id=context.context_id, history=[context.message])
        task.status.CopyFrom(TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
        await event_queue.enqueue_event(task)
        await updater.start_work()
        await self._follow(self._source(text, context.context_id), updater)

    async def _replied(self, events: Events, request: ApprovalRequest, text: str, updater: TaskUpdater) -> None:
        reply = approval_reply(text)
        if reply is None:  # neither: ask again, the run still waits
            await self._waiting.keep(updater.task_id, events, request)
            await updater.requires_input(_said(updater, approval_question(request)))
            return
        approved, reason = reply
        verdict = Verdict.APPROVE if approved else Verdict.DENY
        with contextlib.suppress(UsageError):  # no longer waiting (its approval timed out): the run says how it ended
            answer(request, ApprovalDecision(verdict=verdict, by="a2a", reason=reason))
        await updater.start_work()
        await self._follow(events, updater)

    async def _follow(self, events: Events, updater: TaskUpdater) -> None:
        """The run's events as the task's updates, to its end, or to a call that waits for approval."""
        kept = False
        try:
            async for event in events:
                if isinstance(event, RunEnded):
                    await _ended(event, updater)
                    return
                if isinstance(event, ApprovalRequested):
                    await self._waiting.keep(updater.task_id, events, event.request)
                    kept = True
                    await updater.requires_input(_said(updater, approval_question(event.request)))
                    return
                if (line := progress_text(event)) is not None:
                    await updater.update_status(TaskState.TASK_STATE_WORKING, _said(updater, line))
        finally:
            if not kept:  # ended, failed or cancelled: the run stops with its stream
                with contextlib.suppress(Exception):
                    await events.aclose()  # type: ignore[attr-defined]

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        waiting = self._waiting.take(context.task_id or "")
        if waiting is not None:
            await waiting[0].aclose()  # type: ignore[attr-defined]
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


async def _ended(event: RunEnded, updater: TaskUpdater) -> None:
    result = event.result
    if result.answer is not None:
        await updater.add_artifact([new_text_part(answer_text(result))], name="answer", last_chunk=True)
    state = TaskState.Value("TASK_STATE_" + task_state(result.status).upper().replace("-", "_"))
    said = None if state == TaskState.TASK_STATE_COMPLETED else _said(updater, ending_text(result))
    await updater.update_status(
        state, said, metadata={"aeon_status": str(result.status), "run_id": result.correlation_id}
    )


def _said(updater: TaskUpdater, text: str) -> Any:
    return updater.new_agent_message([new_text_part(text)])


def a2a_routes(source: Source, card: Callable[[str], dict[str, Any]]) -> list[BaseRoute]:
    """The A2A routes: `card(url)` is the agent card (application/views/a2a.agent_card) for the JSON-RPC `url` as
    the client reached this server."""
    base = ParseDict(card("http://localhost" + RPC_PATH), AgentCard())  # the handler's card: its capabilities
    handler = DefaultRequestHandler(agent_executor=RunExecutor(source), task_store=InMemoryTaskStore(), agent_card=base)

    async def served_card(request: Request) -> Response:
        url = str(request.base_url).rstrip("/") + RPC_PATH
        shown = agent_card_to_dict(ParseDict(card(url), AgentCard()))  # with the fields v0.3 clients read
        return JSONResponse(shown, headers={"cache-control": "no-store"})

    well_known = Route(AGENT_CARD_WELL_KNOWN_PATH, served_card, methods=["GET"])
    return [well_known, *create_jsonrpc_routes(handler, RPC_PATH, enable_v0_3_compat=True)]


def card_of(tools: list[ToolSpec]) -> Callable[[str], dict[str, Any]]:
    """Aeon's agent card at a url: its skills the registered `tools`."""
    said = "An LLM orchestration kernel: send a request; it plans, runs the tools, checks the answer and replies."
    return lambda url: agent_card(name="aeon", description=said, url=url, version=metadata.version("aeon"), tools=tools)


def config_source(config: Path | None) -> Source:
    """aeon.stream's runs of `config` (the run use case, in this process), each in the thread it is given once this
    Aeon has threads (RunOptions.thread)."""
    from aeon.entrypoints.api import RunOptions, stream

    threads = "thread" in RunOptions.__optional_keys__

    def run(request: str, thread: str | None) -> Events:
        options: dict[str, Any] = {"config": config} if config is not None else {}
        if thread is not None and threads:
            options["thread"] = thread
        return stream(request, **options)

    return run


def config_routes(config: Path | None) -> list[BaseRoute]:
    """The A2A routes for the runs of `config`, its tools listed once here (for the card)."""
    from aeon.entrypoints.config.layers import load_settings
    from aeon.entrypoints.container import build_container, tools_opened

    with tools_opened(build_container(load_settings(config))) as tools:
        specs = tools.list()
    return a2a_routes(config_source(config), card_of(specs))
