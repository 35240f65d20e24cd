"""A run's events as an AG-UI server-sent-event stream (ag-ui-protocol's EventEncoder; application/views/agui.py
maps them, each checked against the protocol's own types): live, with an interrupt for a call that waits for a person
and the resume that answers it, or a recorded run's audit records."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from ag_ui.core import Event, RunAgentInput
from ag_ui.encoder import EventEncoder
from pydantic import TypeAdapter

from aeon.adapters.protocols.held import Held
from aeon.application.errors import UsageError
from aeon.application.results import RunEnded
from aeon.application.views.agui import AguiEvents, AguiRecords
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Verdict
from aeon.domain.errors import AeonError
from aeon.domain.progress import ApprovalRequested, ProgressEvent

Events = AsyncIterator[ProgressEvent | RunEnded]
Answer = Callable[[ApprovalRequest, ApprovalDecision], None]  # hands a waiting run a person's decision
# RunEvents.look (application/views/run_resource.py): whether the run ended, and its records past a seq (None: no run)
Look = Callable[[str, int], tuple[bool, list[dict[str, Any]]] | None]
_EVENT: TypeAdapter[Any] = TypeAdapter(Event)
EVERY = 0.25  # seconds between looks at a recorded run that goes on
MEDIA_TYPE = EventEncoder().get_content_type()


def request_of(given: RunAgentInput) -> str | None:
    """What the run is asked: the last user message's text (its text parts, for multimodal content)."""
    for message in reversed(given.messages):
        if message.role == "user":
            content = message.content
            if isinstance(content, str):
                return content
            return "\n".join(str(getattr(part, "text", "")) for part in content if getattr(part, "text", None))
    return None


Paused = Held[tuple[AguiEvents, ApprovalRequest]]  # by interrupt id: the run's view and the call it waits on


async def agui_stream(view: AguiEvents, events: Events, paused: Paused) -> AsyncIterator[str]:
    """`events` as AG-UI server-sent events: RUN_STARTED first, every event validated, RUN_ERROR when the run could
    not start (its one-line cause). A call that waits for a person ends the stream with an interrupt, the run kept in
    `paused` for the input that resumes it; otherwise the stream closed (the client gone) stops the run."""
    encoder = EventEncoder()
    for first in view.started():
        yield encoder.encode(_EVENT.validate_python(first))
    kept = False
    try:
        async for event in events:
            for mapped in view.of(event):
                yield encoder.encode(_EVENT.validate_python(mapped))
            if isinstance(event, ApprovalRequested):
                await paused.keep(view.interrupt_id(event.request), events, (view, event.request))
                kept = True
                yield encoder.encode(_EVENT.validate_python(view.interrupted(event.request)))
                return
    except AeonError as exc:
        failed = {"type": "RUN_ERROR", "message": str(exc), "code": getattr(exc, "code", "AEON")}
        yield encoder.encode(_EVENT.validate_python(failed))
    finally:
        if not kept:
            await events.aclose()  # type: ignore[attr-defined]


def resumed(given: RunAgentInput, paused: Paused, answer: Answer) -> tuple[Events, AguiEvents] | None:
    """The run `given.resume` answers (None: none waits on it), handed the decision by `answer` (aeon.answer's):
    approved when resolved with {"approved": true}, else denied."""
    entry = given.resume[0] if given.resume else None
    waiting = paused.take(entry.interrupt_id) if entry is not None else None
    if entry is None or waiting is None:
        return None
    events, (view, request) = waiting
    payload = entry.payload if isinstance(entry.payload, dict) else {}
    approved = entry.status == "resolved" and payload.get("approved") is True
    reason = (
        None if approved else str(payload.get("reason") or ("cancelled" if entry.status == "cancelled" else "denied"))
    )
    decision = ApprovalDecision(verdict=Verdict.APPROVE if approved else Verdict.DENY, by="ag-ui", reason=reason)
    with contextlib.suppress(UsageError):  # no longer waiting (timed out): the run says how it ended
        answer(request, decision)
    view.run_id = given.run_id  # the resumed part is a run of its own for the client
    return events, view


async def recorded_stream(look: Look, run_id: str, *, most_seconds: float, most_records: int) -> AsyncIterator[str]:
    """A recorded run's audit records as AG-UI server-sent events (AguiRecords), from its start until it ends, or
    for `most_seconds` or `most_records` (then the stream stops without RUN_FINISHED: read it again to follow it)."""
    view, encoder, after, seen = AguiRecords(run_id, run_id), EventEncoder(), -1, 0
    deadline = time.monotonic() + most_seconds
    while True:
        looked = await asyncio.to_thread(look, run_id, after)
        ended, fresh = looked if looked is not None else (True, [])
        for record in fresh[: most_records - seen]:
            after, seen = int(record.get("seq", after)), seen + 1
            for mapped in view.of(record):
                yield encoder.encode(_EVENT.validate_python(mapped))
        if ended or seen >= most_records or time.monotonic() > deadline:
            return
        await asyncio.sleep(EVERY)
