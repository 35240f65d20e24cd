"""aeon.stream: the run's typed events as they happen, with the facts of its log records, redacted as they are,
ending with RunEnded; a consumer that leaves early ends the run as interrupted, with its resources closed."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, get_args

import msgspec
import pytest
import yaml

import aeon
from aeon import testing
from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.events import (
    Event,
    LLMCallEnded,
    LLMCallStarted,
    PhaseEnded,
    PhaseStarted,
    PlanMade,
    RunEnded,
    StepEnded,
    StepStarted,
)

from cli_harness import DEMO_CONFIG, REQUEST, records

pytestmark = pytest.mark.usefixtures("isolated_env")

SUM_SCRIPT = DEMO_CONFIG.parent / "scripts" / "sum-5-and-10.yaml"
KEY = "sk-test-5f1c0ffee0ddba11"


def priced(tmp_path: Path) -> Path:
    """The demo's script, priced as if it were a paid model, with its log in tmp_path."""
    config = {
        "llm": {"adapter": "scripted", "script": str(SUM_SCRIPT)},
        "prices": {"scripted": {"input": 2.5, "cached_input": 1.25, "output": 10.0}},
        "log": {"path": str(tmp_path / "runs.jsonl")},
    }
    path = tmp_path / "priced.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


async def collected(stream: AsyncIterator[Event]) -> list[Event]:
    return [event async for event in stream]


def test_the_events_come_in_the_order_the_run_makes_them_and_run_ended_is_last(tmp_path: Path) -> None:
    events = asyncio.run(collected(aeon.stream(REQUEST, config=priced(tmp_path))))

    kinds = [type(e) for e in events]
    assert kinds[0] is PhaseStarted and kinds[-1] is RunEnded and kinds.count(RunEnded) == 1
    assert kinds.index(PhaseStarted) < kinds.index(PlanMade) < kinds.index(StepStarted) < kinds.index(StepEnded)
    starts = [i for i, k in enumerate(kinds) if k is StepStarted]
    ends = [i for i, k in enumerate(kinds) if k is StepEnded]
    assert len(starts) == len(ends) == 2 and all(s < e for s, e in zip(starts, ends, strict=True))
    phases = [(type(e).__name__, e.phase) for e in events if isinstance(e, PhaseStarted | PhaseEnded)]
    assert phases == [(kind, phase) for phase in "ABCD" for kind in ("PhaseStarted", "PhaseEnded")]
    calls = [type(e) for e in events if isinstance(e, LLMCallStarted | LLMCallEnded)]
    assert calls == [LLMCallStarted, LLMCallEnded] * 3  # every call that starts ends


def test_the_events_carry_outputs_tokens_and_cost_and_the_result_last(tmp_path: Path) -> None:
    events = asyncio.run(collected(aeon.stream(REQUEST, config=priced(tmp_path))))

    outputs = {e.step_id: e.output for e in events if isinstance(e, StepEnded)}
    assert outputs == {"s1": 15, "s2": "The sum of 5 and 10 is 15."}
    ended = [e for e in events if isinstance(e, LLMCallEnded)]
    assert all(e.prompt_tokens > 0 and e.completion_tokens > 0 and e.cost and e.cost > 0 for e in ended)
    assert ended[1].step_id == "s2" and ended[1].output == "The sum of 5 and 10 is 15."
    assert all(e.outcome == "success" and e.duration_seconds >= 0 for e in events if isinstance(e, PhaseEnded))
    last = events[-1]
    assert isinstance(last, RunEnded) and last.result.status is aeon.RunStatus.COMPLETED
    assert last.result.budget.cost == pytest.approx(sum(e.cost or 0 for e in ended))


def test_the_events_carry_the_facts_of_the_log_records(tmp_path: Path) -> None:
    events = asyncio.run(collected(aeon.stream(REQUEST, config=priced(tmp_path))))
    log = records(tmp_path / "runs.jsonl")

    fields = ("purpose", "prompt_tokens", "completion_tokens", "cached_tokens", "cost", "model", "step_id", "output")
    calls = [{f: r[f] for f in fields} for r in log if r["event"] == "llm_call"]
    assert [{f: getattr(e, f) for f in fields} for e in events if isinstance(e, LLMCallEnded)] == calls
    exits = [(r["phase"], r["outcome"], r["duration"]) for r in log if r["event"] == "phase_exit"]
    assert [(e.phase, e.outcome, e.duration_seconds) for e in events if isinstance(e, PhaseEnded)] == exits
    tools = [(r["step_id"], r["output"]) for r in log if r["event"] == "tool_call"]
    assert tools == [(e.step_id, e.output) for e in events if isinstance(e, StepEnded) and e.mode == "tool"]
    run_end = log[-1]
    result = events[-1].result  # type: ignore[union-attr]
    assert (run_end["event"], run_end["status"], log[0]["correlation_id"]) == (
        "run_end",
        "completed",
        result.correlation_id,
    )


def test_the_events_are_json_as_one_tagged_union(tmp_path: Path) -> None:
    events = asyncio.run(collected(aeon.stream(REQUEST, config=priced(tmp_path))))

    for event in events:
        encoded = msgspec.json.encode(event)
        assert json.loads(encoded)["type"] == type(event).__name__
        assert msgspec.json.decode(encoded, type=Event) == event


def test_every_event_type_of_the_stream_is_exported_from_aeon_events_and_documented() -> None:
    kinds = get_args(aeon.events.Event)

    assert {kind.__name__ for kind in kinds} == set(aeon.events.__all__) - {"Event"}
    assert all(getattr(aeon.events, kind.__name__) is kind and kind.__doc__ for kind in kinds)


def test_a_secret_in_a_tool_output_and_a_plan_argument_is_redacted_in_every_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PAYMENTS_API_KEY", KEY)

    @aeon.tool
    def account(owner: str) -> str:
        """The account of an owner, with its key."""
        return f"account of {owner}: api_key={KEY}"

    plan = {
        "goal": "read the account",
        "steps": [{"step_id": "s1", "description": "read", "tool": "account", "args": {"owner": KEY}}],
    }
    llm = testing.answers(json.dumps(plan))
    events = asyncio.run(
        collected(aeon.stream("read it", tools=[account], model=llm, config={"run": {"evaluate": False}}))
    )

    shown = b"".join(msgspec.json.encode(e) for e in events)
    assert KEY.encode() not in shown
    (ended,) = [e for e in events if isinstance(e, StepEnded)]
    assert ended.output == "account of [REDACTED]: api_key=[REDACTED]"
    (made,) = [e for e in events if isinstance(e, PlanMade)]
    assert made.plan.steps[0].args == {"owner": "[REDACTED]"}


def test_an_error_before_the_run_comes_out_of_the_first_iteration() -> None:
    async def first() -> Event:
        return await anext(aeon.stream(REQUEST, config={"run": {"ttl": -1}}))

    with pytest.raises(aeon.ConfigurationError, match=r"^config error at run\.ttl: .*\[from .*\]$"):
        asyncio.run(first())


# -- leaving early --------------------------------------------------------------------------------------------------


def waiting_tool(started: list[str]) -> Any:
    @aeon.tool
    async def wait_forever(label: str) -> str:
        """Wait until the run is cancelled."""
        started.append(label)
        await asyncio.Event().wait()
        return label

    return wait_forever


STEPS = {
    "goal": "wait",
    "steps": [
        {"step_id": "s1", "description": "wait", "tool": "wait_forever", "args": {"label": "first"}},
        {"step_id": "s2", "description": "never reached", "tool": "wait_forever", "args": {"label": "second"}},
    ],
}


def closings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the run closes, in order: the model client and the event log (its resources)."""
    closed: list[str] = []
    aclose, close = ScriptedLLM.aclose, JsonlEventLog.close

    async def model_closed(self: ScriptedLLM) -> None:
        closed.append("model")
        await aclose(self)

    def log_closed(self: JsonlEventLog) -> None:
        closed.append("log")
        close(self)

    monkeypatch.setattr(ScriptedLLM, "aclose", model_closed)
    monkeypatch.setattr(JsonlEventLog, "close", log_closed)
    return closed


@pytest.mark.parametrize("how", ["break", "aclosing", "exception"])
def test_leaving_the_stream_early_ends_the_run_as_interrupted_on_the_record_and_closes_it(
    how: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = closings(monkeypatch)
    log = tmp_path / "runs.jsonl"
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"responses": [json.dumps(STEPS)]}))
    started: list[str] = []
    options: dict[str, Any] = {"tools": [waiting_tool(started)], "model": f"scripted:{script}", "log_file": log}
    options["config"] = {"run": {"evaluate": False}}
    seen: list[str] = []

    async def main() -> None:
        if how == "aclosing":
            async with contextlib.aclosing(aeon.stream("wait", **options)) as events:
                async for event in events:
                    seen.append(type(event).__name__)
                    if isinstance(event, StepStarted):
                        await asyncio.sleep(0.01)  # the tool is waiting now
                        break
            assert records(log)[-1]["event"] == "run_end" and closed  # ended before the `async with` did
            return
        with contextlib.suppress(LookupError):
            async for event in aeon.stream("wait", **options):
                seen.append(type(event).__name__)
                if isinstance(event, StepStarted):
                    await asyncio.sleep(0.01)
                    if how == "exception":
                        raise LookupError("the consumer failed")
                    break

    with warnings.catch_warnings(), caplog.at_level(logging.WARNING, logger="asyncio"):
        warnings.simplefilter("error")
        asyncio.run(main())
        gc.collect()

    assert started == ["first"] and "RunEnded" not in seen
    end = records(log)[-1]
    assert (end["event"], end["status"]) == ("run_end", "interrupted")
    cycle = [r for r in records(log) if r["event"] == "cycle"][-1]
    assert "interrupted" in cycle["errors"]
    assert closed == ["model", "log"]
    assert caplog.records == []  # no "Task was destroyed but it is pending", no exception never retrieved
