"""GET /runs/{id} of a run a crash stopped inside a non-idempotent tool call (it has no result and no run_end record)
says why, with the code `aeon resume` would name, instead of a bare "stopped"."""

from __future__ import annotations

from aeon.adapters.durable.resources import Read, document
from aeon.adapters.durable.rows import RunRow
from aeon.adapters.durable.runtime import Stopped
from aeon.adapters.durable.steps import UNSAFE_CODE


def _row(status: str) -> RunRow:
    return RunRow(id="r1", request="pay the bill", status=status, passes=1, calls=2, tokens=0,
                  started="2026-11-28 16:00:00", duration=None)  # fmt: skip


def test_a_stopped_run_shows_the_code_and_message_of_why_it_stopped() -> None:
    why = Stopped(code=UNSAFE_CODE, message="tool 'pay' (s2) was running when the run stopped", tool="pay", key="s2")
    doc = document(Read(_row("stopped"), None, None, None, why))
    assert doc["status"] == "stopped" and doc["result"] is None
    assert doc["error"] == {"code": "AEON.DURABLE.UNSAFE_TOOL_IN_FLIGHT", "message": why.message}


def test_a_run_that_did_not_stop_has_no_error() -> None:
    assert document(Read(_row("running"), None, None, None))["error"] is None
