"""Approval in a durable run: the request is published as a DBOS event and the workflow waits for the decision as
a DBOS message, so that no process has to stay alive while a person decides. `aeon approve` / `aeon deny` send it
from any process that shares the database; the wait's deadline is DBOS's durable one (run.approval_timeout)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Awaitable, Callable

import msgspec
from dbos import DBOS, DBOSClient

from aeon.application.ports import ApproverPort
from aeon.application.redaction import NO_SECRETS, Redactor
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Pending
from aeon.domain.run_state import RunState

APPROVAL_EVENT = "aeon.approval"  # the event a waiting run publishes: its Pending request, "" once decided
ANSWERED_AT_ONCE = 0.5  # seconds: a decision on the record or already sent comes within this; else someone is asked


def approval_topic(key: str) -> str:
    """The message topic a decision on request `key` is sent on: a decision for another request never answers it."""
    return f"aeon.approval {key}"


class DurableApprover:
    """An ApproverPort for a run that is a DBOS workflow. `inline`, when the run has a terminal, asks there at the
    same time: its answer is sent as the same message any other process could send (the first decision wins).
    `waiting` is told once the request is on the record, so a process with no one to ask may leave."""

    def __init__(
        self,
        *,
        inline: ApproverPort | None = None,
        waiting: Callable[[Pending], None] | None = None,
        redactor: Redactor = NO_SECRETS,
        before_wait: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._inline, self._waiting, self._redactor = inline, waiting, redactor
        self._before_wait = before_wait

    async def decide(
        self, request: ApprovalRequest, snapshot: RunState, *, wait_seconds: float
    ) -> ApprovalDecision | None:
        pending = Pending(request=request, plan=snapshot.plan, budget=snapshot.budget)
        if self._before_wait is not None:  # what the run deferred is written before it waits (maybe for days)
            await self._before_wait()
        await DBOS.set_event_async(APPROVAL_EVENT, self._redactor.json(msgspec.json.encode(pending)).decode())
        workflow_id = DBOS.workflow_id or request.run_id
        answer = asyncio.create_task(DBOS.recv_async(approval_topic(request.key), timeout_seconds=wait_seconds))
        # A decision already on the record (a run executed again) or already sent comes at once: nobody is asked
        done, _ = await asyncio.wait({answer}, timeout=ANSWERED_AT_ONCE)
        asking = None
        if not done and self._inline is not None:  # outside the workflow's context: its send is no step of the run
            ask = self._ask_inline(self._inline, workflow_id, request, snapshot, wait_seconds)
            asking = asyncio.create_task(ask, context=contextvars.Context())
        elif not done and self._waiting is not None:
            self._waiting(pending)
        try:
            sent = await answer
        finally:
            if asking is not None:
                asking.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asking
        await DBOS.set_event_async(APPROVAL_EVENT, "")
        return None if sent is None else msgspec.json.decode(str(sent), type=ApprovalDecision)

    @staticmethod
    async def _ask_inline(
        inline: ApproverPort, workflow_id: str, request: ApprovalRequest, snapshot: RunState, wait_seconds: float
    ) -> None:
        decision = await inline.decide(request, snapshot, wait_seconds=wait_seconds)
        if decision is not None:
            await send_decision(workflow_id, request.key, decision)


async def send_decision(run_id: str, key: str, decision: ApprovalDecision) -> None:
    """Answer request `key` of run `run_id` (from anywhere: the message is kept until the run reads it)."""
    await DBOS.send_async(run_id, msgspec.json.encode(decision).decode(), approval_topic(key))


def waiting_on(client: DBOSClient, run_id: str) -> Pending | None:
    """The call run `run_id` waits on a person's decision for, as its APPROVAL_EVENT holds it now (no waiting for
    it), or None: decided, never asked, or no such run."""
    event = client.get_event(run_id, APPROVAL_EVENT, timeout_seconds=0)
    if not isinstance(event, str) or not event:
        return None
    return msgspec.json.decode(event, type=Pending)
