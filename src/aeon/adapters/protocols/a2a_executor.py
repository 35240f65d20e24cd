"""The A2A agent that runs Aeon (the a2a-sdk's AgentExecutor): a task is a run of its message in its context (the
thread); the run's events become the task's status updates, its answer an artifact, its end the task's state; a call
waiting for approval makes the task input-required, and the reply ('approve', 'deny: why') answers it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from a2a.helpers import get_message_text, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Task, TaskState, TaskStatus

from aeon.adapters.protocols.held import Held
from aeon.application.errors import UsageError
from aeon.application.results import RunEnded
from aeon.application.views.a2a import (
    answer_text,
    approval_question,
    approval_reply,
    ending_text,
    progress_text,
    task_state,
)
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Verdict
from aeon.domain.progress import ApprovalRequested, ProgressEvent

Events = AsyncIterator[ProgressEvent | RunEnded]
# a run's events for a request in a context (the thread): the run use case behind it (aeon.stream's)
Source = Callable[[str, str | None], Events]
Answer = Callable[[ApprovalRequest, ApprovalDecision], None]  # hands a waiting run a person's decision


class RunExecutor(AgentExecutor):
    """The A2A agent: each new task is one run of its message, from `source`; a task waiting for approval keeps its
    run's events here until the reply comes (the run itself waits as long as run.approval_timeout says), which
    `answer` (aeon.answer's) hands the waiting run."""

    def __init__(self, source: Source, answer: Answer) -> None:
        self._source, self._answer = source, answer
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
            self._answer(request, ApprovalDecision(verdict=verdict, by="a2a", reason=reason))
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
