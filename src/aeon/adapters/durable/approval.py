"""Approval in a durable run: the request is published as a DBOS event and the workflow waits for the decision as
a DBOS message, so that no process has to stay alive while a person decides. `aeon approve` / `aeon deny` send it
from any process that shares the database; the wait's deadline is DBOS's durable one (run.approval_timeout).
The first decision on a request wins: it is recorded (table `aeon_decisions`: who, when) in the transaction that
sends it, so a second decision, or the loser of a race, sends nothing and learns what was decided, by whom, when."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import msgspec
import sqlalchemy as sa
from dbos import DBOS, DBOSClient

from aeon.adapters.durable.tables import create_tables
from aeon.application.ports import ApproverPort
from aeon.application.redaction import NO_SECRETS, Redactor
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Pending
from aeon.domain.run_state import RunState

APPROVAL_EVENT = "aeon.approval"  # the event a waiting run publishes: its Pending request, "" once decided
ANSWERED_AT_ONCE = 0.5  # seconds: a decision on the record or already sent comes within this; else someone is asked

_META = sa.MetaData()
DECISIONS = sa.Table(
    "aeon_decisions",
    _META,
    sa.Column("run_id", sa.String(255), primary_key=True),
    sa.Column("key", sa.String(255), primary_key=True),  # the request's key within its run
    sa.Column("verdict", sa.String(16), nullable=False),
    sa.Column("by", sa.String(255), nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("decided_at", sa.Float, nullable=False),  # epoch seconds on the deciding host
)


class Decided(msgspec.Struct, frozen=True, kw_only=True):
    """A decision on the record: which request it answered, what it was, who made it and when."""

    run_id: str
    key: str
    verdict: str
    by: str
    reason: str | None
    at: str  # ISO 8601, UTC

    def said(self) -> str:
        """What was decided, by whom and when: `approved by ana at 2026-05-01 09:30:00 UTC` (a denial: and why)."""
        done = "approved" if self.verdict == "approve" else "denied"
        why = f" ({self.reason})" if self.verdict != "approve" and self.reason else ""
        return f"{done} by {self.by} at {self.at[:19].replace('T', ' ')} UTC{why}"


class Decisions:
    """The decisions on the record of one system database (`engine`), sent through `client`."""

    def __init__(self, engine: sa.Engine, client: DBOSClient, *, clock: Callable[[], float] = time.time) -> None:
        self._engine, self._client, self._clock = engine, client, clock
        create_tables(_META, engine)

    def claim(self, run_id: str, key: str, decision: ApprovalDecision) -> Decided | None:
        """Record `decision` on request `key` of run `run_id` and send it to the run, in one transaction: None when
        it is the first decision on that request; else nothing is sent, and the decision made first is returned."""
        row = {
            "run_id": run_id,
            "key": key,
            "verdict": decision.verdict.value,
            "by": decision.by,
            "reason": decision.reason,
            "decided_at": self._clock(),
        }
        try:
            with self._engine.begin() as c:
                c.execute(sa.insert(DECISIONS).values(**row))
                message = msgspec.json.encode(decision).decode()
                self._client.send_in_transaction(c, run_id, message, approval_topic(key))
        except sa.exc.IntegrityError:
            made = self.of(run_id, key)
            if made is None:  # not a second decision: something else broke the insert
                raise
            return made
        return None

    def of(self, run_id: str, key: str | None = None) -> Decided | None:
        """The decision on request `key` of run `run_id` (None: its latest decision on any request), or None."""
        query = sa.select(DECISIONS).where(DECISIONS.c.run_id == run_id)
        if key is not None:
            query = query.where(DECISIONS.c.key == key)
        with self._engine.connect() as c:
            found = c.execute(query.order_by(DECISIONS.c.decided_at.desc()).limit(1)).first()
        if found is None:
            return None
        at = datetime.fromtimestamp(found.decided_at, UTC).isoformat()
        return Decided(
            run_id=found.run_id, key=found.key, verdict=found.verdict, by=found.by, reason=found.reason, at=at
        )


def approval_topic(key: str) -> str:
    """The message topic a decision on request `key` is sent on: a decision for another request never answers it."""
    return f"aeon.approval {key}"


class DurableApprover:
    """An ApproverPort for a run that is a DBOS workflow. `inline`, when the run has a terminal, asks there at the
    same time: its answer is sent as the same message any other process could send (the first decision wins).
    `waiting` is told once the request is on the record (with the run's state), so a process with no one to ask may
    leave."""

    def __init__(
        self,
        *,
        inline: ApproverPort | None = None,
        waiting: Callable[[Pending, RunState], None] | None = None,
        redactor: Redactor = NO_SECRETS,
        before_wait: Callable[[], Awaitable[None]] | None = None,
        send: Callable[[str, str, ApprovalDecision], Awaitable[None]] | None = None,
    ) -> None:
        self._inline, self._waiting, self._redactor = inline, waiting, redactor
        self._before_wait, self._send = before_wait, send or send_decision

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
            ask = self._ask_inline(self._inline, self._send, workflow_id, request, snapshot, wait_seconds)
            asking = asyncio.create_task(ask, context=contextvars.Context())
        elif not done and self._waiting is not None:
            self._waiting(pending, snapshot)
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
        inline: ApproverPort,
        send: Callable[[str, str, ApprovalDecision], Awaitable[None]],
        workflow_id: str,
        request: ApprovalRequest,
        snapshot: RunState,
        wait_seconds: float,
    ) -> None:
        decision = await inline.decide(request, snapshot, wait_seconds=wait_seconds)
        if decision is not None:
            await send(workflow_id, request.key, decision)


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
