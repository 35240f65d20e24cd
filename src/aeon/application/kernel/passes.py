"""Opening an ExecutionPass before phase C and closing it after phase D, required fields checked."""

from __future__ import annotations

from datetime import datetime

import msgspec

from aeon.application.kernel.phase_runner import PhaseRunner
from aeon.application.ports import ClockPort
from aeon.domain.history import DepthRecord, ExecutionPass, PassUsage, TimingInformation
from aeon.domain.phases import Component, Stage, Transition
from aeon.domain.plan import Plan
from aeon.domain.run_state import RunState
from aeon.domain.transitions import PASS_CONSISTENCY


def frozen_copy(plan: Plan) -> Plan:
    """A snapshot of `plan` that later steps cannot change."""
    return msgspec.json.decode(msgspec.json.encode(plan), type=Plan)


def open_pass(state: RunState, runner: PhaseRunner) -> ExecutionPass:
    assert state.depth is not None and state.pass_start is not None and state.plan is not None
    opened = ExecutionPass(
        pass_number=state.pass_number,
        phase=Stage.EXECUTE.label(state.pass_number),
        plan_state=frozen_copy(state.plan),
        ttl_remaining=state.budget.ttl_remaining,
        timing_information=TimingInformation(start_time=state.pass_start),
        task_profile=state.profile,
        adaptive_depth=DepthRecord.of(state.depth),
    )
    if problems := opened.entry_problems():
        raise runner.error(Transition.C_TO_D, PASS_CONSISTENCY, "; ".join(problems), Component.EXECUTION_PASS)
    state.pass_opened(opened)
    return opened


def close_pass(
    state: RunState, clock: ClockPort, runner: PhaseRunner, closing: ExecutionPass, *, check: bool = True
) -> None:
    assert state.plan is not None
    spent, end = state.budget, clock.now().isoformat()
    start = closing.timing_information.start_time
    seconds = max((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds(), 0.0)
    closing.timing_information = TimingInformation(start_time=start, end_time=end, duration_seconds=seconds)
    closing.phases = list(state.pass_phases)
    mark = state.usage_mark
    closing.llm_usage = PassUsage(
        calls=spent.llm_calls - mark.calls,
        prompt_tokens=spent.prompt_tokens - mark.prompt_tokens,
        completion_tokens=spent.completion_tokens - mark.completion_tokens,
    )
    closing.final_plan_state = frozen_copy(state.plan)
    if check and (problems := closing.exit_problems()):
        raise runner.error(Transition.D_TO_A_OR_B, PASS_CONSISTENCY, "; ".join(problems), Component.EXECUTION_PASS)
    usage = PassUsage(
        calls=spent.llm_calls, prompt_tokens=spent.prompt_tokens, completion_tokens=spent.completion_tokens
    )
    state.pass_closed(closing, usage_mark=usage)
