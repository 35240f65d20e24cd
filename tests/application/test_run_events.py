"""A run's event stream (application/views/run_resource.RunEvents): records past the last id sent once each, in seq
order, redacted; `end` when the run ended, or at the stream's bounds (records, seconds) so a reconnect goes on."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aeon.application.redaction import Redactor
from aeon.application.views.run_resource import Looked, RunEvents

LOG = Path("runs.jsonl")


def _records(n: int) -> list[dict[str, Any]]:
    return [{"event": "cycle", "seq": i, "correlation_id": "r", "note": "key sk-planted-123"} for i in range(n)]


def _events(state: list[bool], records: list[dict[str, Any]], after: int, most: int, seconds: float = 60) -> list[Any]:
    ticks = iter(range(1000))
    events = RunEvents(lambda r: (state.pop(0), LOG), lambda log, r: records, Redactor(["sk-planted-123"]),
                       clock=lambda: float(next(ticks)))  # fmt: skip

    async def look(seen: int) -> Looked:
        return events.look("r", seen)

    async def collect() -> list[Any]:
        return [e async for e in events.stream(look, after, most, seconds, every=0)]

    return asyncio.run(collect())


def test_records_past_the_last_event_id_then_end_when_the_run_ended() -> None:
    got = _events([False, False, True], _records(5), after=1, most=100)
    assert [e["id"] for e in got[:-1]] == ["2", "3", "4"] and got[-1]["event"] == "end"
    assert "the run ended" in got[-1]["data"] and "sk-planted" not in str(got)


def test_a_stream_ends_at_its_bound_of_records_or_seconds_so_a_reconnect_goes_on() -> None:
    by_count = _events([False] * 10, _records(5), after=-1, most=2)
    assert [e.get("id") for e in by_count] == ["0", "1", None] and "bounded" in by_count[-1]["data"]
    by_time = _events([False] * 10, [], after=-1, most=100, seconds=3)
    assert by_time[-1]["event"] == "end" and "bounded" in by_time[-1]["data"]
