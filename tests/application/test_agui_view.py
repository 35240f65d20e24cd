"""A run's events in the AG-UI protocol (application/views/agui.py): every event the view makes validates with
ag-ui-protocol's own types, in the protocol's order, for a real scripted run and for each way a run ends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest
from ag_ui.core import Event, EventType
from pydantic import TypeAdapter

import aeon
from aeon.application.results import ErrorInfo, RunEnded, RunStatus
from aeon.application.views.agui import AguiEvents, AguiRecords
from aeon.domain.approval import ApprovalRequest

CONFIG = Path(__file__).parents[2] / "config"
EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


def mapped(request: str, config: Path) -> list[Any]:
    async def go() -> list[dict[str, Any]]:
        view = AguiEvents("run-1", "thread-1")
        out = view.started()
        async for event in aeon.stream(request, config=config):
            out.extend(view.of(event))
        return out

    return [EVENTS.validate_python(e) for e in asyncio.run(go())]


def test_a_scripted_run_maps_to_a_valid_agui_stream_in_order(isolated_env: None) -> None:
    events = mapped("calculate the sum of 5 and 10", CONFIG / "scripted-simple-request.yaml")
    kinds = [e.type for e in events]
    assert kinds[0] is EventType.RUN_STARTED and kinds[-1] is EventType.RUN_FINISHED
    assert events[-1].outcome.type == "success" and events[-1].result["status"] == "completed"
    assert kinds.count(EventType.RUN_STARTED) == 1 and kinds.count(EventType.RUN_FINISHED) == 1
    events = [e for e in events if e.type is not EventType.CUSTOM]  # phases, LLM calls, evaluation: aeon.<Event>
    kinds = [e.type for e in events]
    at = kinds.index(EventType.STATE_SNAPSHOT)
    assert [s["tool"] for s in events[at].snapshot["plan"]["steps"]] == ["calculator"]
    assert kinds[at + 1 : at + 5] == [
        EventType.STEP_STARTED, EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_END,
    ]  # fmt: skip
    start, args = events[at + 2], events[at + 3]
    assert start.tool_call_name == "calculator" and msgspec.json.decode(args.delta) == {"expression": "5 + 10"}
    result = next(e for e in events if e.type is EventType.TOOL_CALL_RESULT)
    assert result.tool_call_id == start.tool_call_id and result.content == "15"
    assert EventType.STATE_DELTA in kinds and EventType.STEP_FINISHED in kinds
    text = [e.delta for e in events if e.type is EventType.TEXT_MESSAGE_CONTENT]
    assert text == ["15"]


def result_of(status: RunStatus, **fields: Any) -> RunEnded:
    base = {
        "status": status, "correlation_id": "run-1", "request": "r", "plan": None, "outputs": {},
        "budget": {"ttl": 1, "ttl_remaining": 1, "max_llm_calls": 1, "llm_calls": 0, "prompt_tokens": 0,
                   "completion_tokens": 0, "cached_tokens": 0},
        "counts": {},
    }  # fmt: skip
    return msgspec.convert({"result": base | fields}, RunEnded)


def test_an_awaiting_approval_run_finishes_with_an_interrupt() -> None:
    request = ApprovalRequest(
        run_id="run-1", key="p1-s2", step_id="s2", description="publish", tool="publish", args={}, pass_number=1
    )
    ended = result_of(RunStatus.AWAITING_APPROVAL, pending_approval=msgspec.to_builtins(request))
    event = EVENTS.validate_python(AguiEvents("run-1", "t").of(ended)[-1])
    assert event.type is EventType.RUN_FINISHED and event.outcome.type == "interrupt"
    assert event.outcome.interrupts[0].reason == "approval"


@pytest.mark.parametrize("status", [RunStatus.ERROR, RunStatus.FAILED, RunStatus.TTL_EXPIRED, RunStatus.DENIED])
def test_a_run_that_did_not_get_done_ends_with_run_error(status: RunStatus) -> None:
    error = ErrorInfo(code="AEON.X", message="it broke", phase="B") if status is RunStatus.ERROR else None
    fields = {"error": msgspec.to_builtins(error)} if error else {}
    event = EVENTS.validate_python(AguiEvents("run-1", "t").of(result_of(status, **fields))[-1])
    assert event.type is EventType.RUN_ERROR
    assert event.code == ("AEON.X" if error else f"AEON.RUN.{status.upper()}")


def test_an_interrupted_run_finishes_cancelled() -> None:
    event = EVENTS.validate_python(AguiEvents("run-1", "t").of(result_of(RunStatus.INTERRUPTED))[-1])
    assert event.type is EventType.RUN_FINISHED and event.outcome.type == "cancelled"


def test_a_recorded_runs_audit_records_map_to_a_valid_agui_stream(isolated_env: None, tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    result = aeon.run(
        "calculate the sum of 5 and 10", config=CONFIG / "scripted-simple-request.yaml", log_file=str(log)
    )
    view = AguiRecords(result.correlation_id, "t")
    records = [msgspec.json.decode(line) for line in log.read_bytes().splitlines()]
    events = [EVENTS.validate_python(e) for r in records if r.get("correlation_id") for e in view.of(r)]
    kinds = [e.type for e in events]
    assert kinds[0] is EventType.RUN_STARTED and kinds[-1] is EventType.RUN_FINISHED
    call = kinds.index(EventType.TOOL_CALL_START)
    assert events[call].tool_call_name == "calculator" and events[call + 3].content == "15"
