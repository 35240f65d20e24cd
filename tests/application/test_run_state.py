"""The run state is one record: it round-trips through msgspec byte for byte, and a run rebuilt from it at any phase
boundary ends exactly as the uninterrupted run did (what durable runs rely on)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from aeon import testing
from aeon.application.kernel.run import RunSettings
from aeon.application.results import RunResult
from aeon.application.views.result import result_document
from aeon.domain.phases import Stage
from aeon.domain.run_state import RunState

from harness import SUM_STEP, plan_json
from multipass import add_step, first, no_issues, profile, refine, verdict


class Checkpoints:
    """A CheckpointPort keeping every state it is given, encoded (what a durable store would keep)."""

    def __init__(self) -> None:
        self.saved: list[bytes] = []

    async def save(self, state: RunState) -> None:
        self.saved.append(state.encode())


def script(failing: int, answers: list[str]) -> list[str]:
    """`failing` passes whose answer is judged incomplete (each adds an LLM step), then one that converges."""
    out = [first(profile(3), plan_json(SUM_STEP)), no_issues(), verdict(False) if failing else verdict(True)]
    for n in range(failing):
        out += [refine(add_step(f"x{n}", f"State the result, take {n + 1}", agent="llm")), answers[n], no_issues()]
        out.append(verdict(n == failing - 1))
    return out


def run(llm_answers: list[str], *, state: RunState | None = None) -> tuple[RunResult, Checkpoints]:
    checkpoints = Checkpoints()
    # a resumed run goes on later, on its own clock
    clock = testing.FakeClock(start=LATER) if state is not None else testing.FakeClock()
    orch = testing.orchestrator(
        testing.answers(*llm_answers), run=RunSettings(ttl=4, max_llm_calls=40), checkpoint=checkpoints, clock=clock
    )
    orch.new_id = lambda: "00000000-0000-4000-8000-000000000001"  # one correlation id for both runs
    coro = orch.resume(state) if state is not None else orch.run("calculate the sum of 5 and 10")
    return asyncio.run(coro), checkpoints


LATER = datetime(2030, 1, 1, tzinfo=UTC)
_TIMED = ("time", "duration", "seconds", "started", "timestamp", "elapsed")


def timeless(value: Any) -> Any:
    """The result document without clock readings (a resumed run has its own clock)."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if not any(t in k for t in _TIMED)}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def document(result: RunResult) -> Any:
    return timeless({**result_document(result), "history": msgspec.to_builtins(result.history)})


_answer = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() and "{" not in s)


@settings(max_examples=25)
@given(failing=st.integers(0, 2), answers=st.lists(_answer, min_size=2, max_size=2))
def test_every_checkpoint_round_trips_byte_for_byte(failing: int, answers: list[str]) -> None:
    result, checkpoints = run(script(failing, answers))
    assert result.status.value == "completed" and result.passes == failing + 1
    assert len(checkpoints.saved) >= 3 * (failing + 1)
    for blob in checkpoints.saved:
        state = RunState.decode(blob)
        assert state.encode() == blob
        assert RunState.decode(state.encode()) == state


@settings(max_examples=6)
@given(failing=st.integers(1, 2), answers=st.lists(_answer, min_size=2, max_size=2))
def test_a_run_resumed_at_any_phase_boundary_ends_like_the_uninterrupted_run(failing: int, answers: list[str]) -> None:
    llm_answers = script(failing, answers)
    whole, checkpoints = run(llm_answers)
    expected = document(whole)
    stages = set()
    for blob in checkpoints.saved:
        state = RunState.decode(blob)
        stages.add(state.next_stage)
        sent = state.counters.llm_calls  # the calls before the boundary are not made again
        resumed, _ = run(llm_answers[sent:], state=state)
        assert document(resumed) == expected, (state.next_stage, state.pass_number)
    assert stages == {Stage.PROFILE_AND_PLAN, Stage.VALIDATE_PLAN, Stage.EXECUTE, Stage.DECIDE}


def test_a_resumed_run_says_where_it_went_on_from_and_restores_memory() -> None:
    llm_answers = script(1, ["The sum is 15.", "unused"])
    whole, checkpoints = run(llm_answers)
    state = RunState.decode(checkpoints.saved[-1])  # before phase D of the last pass
    assert state.next_stage is Stage.DECIDE and state.memory["step:s1"]["output"] == 15
    log = testing.ListLog()
    clock = testing.FakeClock(start=LATER)
    orch = testing.orchestrator(testing.answers(), run=RunSettings(ttl=4, max_llm_calls=40), log=log, clock=clock)
    resumed = asyncio.run(orch.resume(state))
    assert resumed.status.value == "completed" and resumed.answer == whole.answer
    (start,) = log.of("run_resumed")
    assert start["from_stage"] == Stage.DECIDE.value and start["pass_number"] == 2
    assert "run_start" not in log.kinds()
