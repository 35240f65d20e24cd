"""What aeon.stream hands its caller: the run's events on a queue (Feed), and the approver the caller answers in its
own code (Answers): the ApprovalRequested event, answered with `aeon.answer`."""

from __future__ import annotations

import asyncio

from aeon.application.errors import UsageError
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Verdict
from aeon.domain.progress import ProgressEvent
from aeon.domain.run_state import RunState

# The stream's open approval requests, by run and request key: aeon.answer resolves them.
_WAITING: dict[tuple[str, str], asyncio.Future[ApprovalDecision]] = {}


class Feed:
    """The stream's ProgressPort: each event onto the stream's queue, never waiting (update is called in the run)."""

    def __init__(self, queue: asyncio.Queue[ProgressEvent | None]) -> None:
        self._queue = queue

    def update(self, event: ProgressEvent) -> None:
        self._queue.put_nowait(event)


class Answers:
    """The ApproverPort of a stream without `approve=`: each request waits for `aeon.answer` on its event."""

    async def decide(
        self, request: ApprovalRequest, snapshot: RunState, *, wait_seconds: float
    ) -> ApprovalDecision | None:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        _WAITING[request.run_id, request.key] = future
        try:
            return await asyncio.wait_for(future, wait_seconds)
        except TimeoutError:
            return None
        finally:
            _WAITING.pop((request.run_id, request.key), None)


def answer(request: ApprovalRequest, decision: bool | ApprovalDecision, /) -> None:
    """Answer a stream's ApprovalRequested event: `aeon.answer(event.request, True)` approves the call as asked,
    False denies it, an ApprovalDecision edits its arguments or gives a reason. UsageError when the request is not
    waiting (answered already, or from a run with an `approve=` callback)."""
    future = _WAITING.get((request.run_id, request.key))
    if future is None or future.done():
        raise UsageError(f"tool call {request.key} of run {request.run_id} is not waiting for an answer")
    if not isinstance(decision, ApprovalDecision):
        verdict = Verdict.APPROVE if decision is True else Verdict.DENY
        decision = ApprovalDecision(verdict=verdict, by="aeon.answer", reason=None if decision else "denied")
    future.set_result(decision)
