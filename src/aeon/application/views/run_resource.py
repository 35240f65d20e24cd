"""A run as the HTTP API (`aeon serve`) shows it: its id, status and request, the call it waits on, and once it
ended its result as `aeon run --json` prints it — one JSON document for GET /runs/{id}, the list and the webhook."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

from aeon.application.redaction import Redactor
from aeon.application.results import RunResult
from aeon.application.views.result import result_document
from aeon.domain.approval import Pending


def run_document(
    *,
    run_id: str,
    status: str,
    request: str,
    started: str,
    result: RunResult | None,
    pending: Pending | None,
    error: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The run's document: `result` is `aeon run --json`'s once it ended, `awaiting` the call it waits on, `error`
    (code, message) why a run that has no result stopped (a non-idempotent tool call cut off by a crash)."""
    awaiting = None
    if pending is not None:
        asked = pending.request
        awaiting = {
            "step_id": asked.step_id, "tool": asked.tool, "args": asked.args, "description": asked.description,
            "reason": asked.reason,
        }  # fmt: skip
    return {
        "run_id": run_id,
        "status": status,
        "request": request,
        "started": started,
        "awaiting": awaiting,
        "result": result_document(result) if result is not None else None,
        "error": error,
    }


def record_event(record: dict[str, Any]) -> dict[str, str]:
    """One audit record as a server-sent event: its kind the event's name, its seq the event's id."""
    return {"event": str(record.get("event", "record")), "id": str(record.get("seq", "")),
            "data": msgspec.json.encode(record).decode()}  # fmt: skip


Looked = tuple[bool, list[dict[str, Any]]] | None  # whether the run had ended, its records past a seq; None: no run


class RunEvents:
    """A run's audit records as an event stream reads them: `state(run_id)` says whether the run ended and where its
    log is (None: no such run), `records(log, run_id)` its records there, plain and in seq order; each redacted."""

    def __init__(
        self,
        state: Callable[[str], tuple[bool, Path | None] | None],
        records: Callable[[Path, str], list[dict[str, Any]]],
        redactor: Redactor,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._state, self._records, self._redactor, self._clock = state, records, redactor, clock

    async def stream(
        self, look: Callable[[int], Awaitable[Looked]], after: int, most: int, seconds: float, every: float = 0.25,
    ) -> AsyncIterator[dict[str, str]]:  # fmt: skip
        """The events of a stream: the records `look(after)` finds past seq `after` (it is `self.look` of one run,
        off the event loop), looked at every `every` seconds, then `end` once the run ended, or after `most` records
        or `seconds` (a reconnect with Last-Event-ID goes on)."""
        sent, deadline = 0, self._clock() + seconds
        while True:
            ended, fresh = await look(after) or (True, [])
            for record in fresh[: most - sent]:
                yield record_event(record)
                after, sent = int(record["seq"]), sent + 1
            if sent >= most or self._clock() > deadline:
                yield {"event": "end", "data": '{"why": "bounded: reconnect with Last-Event-ID for more"}'}
                return
            if ended:
                yield {"event": "end", "data": '{"why": "the run ended"}'}
                return
            await asyncio.sleep(every)

    def look(self, run_id: str, after: int) -> Looked:
        """Whether run `run_id` had ended before its records were read, and its records past seq `after`."""
        state = self._state(run_id)
        if state is None:
            return None
        ended, log = state
        fresh = [r for r in self._records(log, run_id) if int(r.get("seq", -1)) > after] if log is not None else []
        return ended, [self._redactor.scrub(r) for r in fresh]
