"""Opening an ExecutionPass before phase C and closing it after phase D, required fields checked."""

from __future__ import annotations

from datetime import datetime

import msgspec

from aeon.application.phase_runner import PhaseRunner
from aeon.application.run import Run
from aeon.domain.history import DepthRecord, ExecutionPass, PassUsage, TimingInformation
from aeon.domain.phases import PASS_CONSISTENCY, Stage
from aeon.domain.plan import Plan


def frozen_copy(plan: Plan) -> Plan:
    """A snapshot of `plan` that later steps cannot change."""
    return msgspec.json.decode(msgspec.json.encode(plan), type=Plan)


def open_pass(run: Run, runner: PhaseRunner) -> ExecutionPass:
    s = run.state
    assert s.depth is not None and s.pass_start is not None
    xp = ExecutionPass(
        pass_number=s.pass_number,
        phase=Stage.EXECUTE.label(s.pass_number),
        plan_state=frozen_copy(run.plan),
        ttl_remaining=s.budget.ttl_remaining,
        timing_information=TimingInformation(start_time=s.pass_start),
        task_profile=s.profile,
        adaptive_depth=DepthRecord.of(s.depth),
    )
    if problems := xp.entry_problems():
        raise runner.error("C->D", PASS_CONSISTENCY, "; ".join(problems), "execution_pass")
    s.current = xp
    return xp


def close_pass(run: Run, runner: PhaseRunner, xp: ExecutionPass, *, check: bool = True) -> None:
    s, b = run.state, run.state.budget
    end = run.clock.now().isoformat()
    start = xp.timing_information.start_time
    seconds = max((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds(), 0.0)
    xp.timing_information = TimingInformation(start_time=start, end_time=end, duration_seconds=seconds)
    xp.phases = list(s.pass_phases)
    mark = s.usage_mark
    xp.llm_usage = PassUsage(
        calls=b.llm_calls - mark.calls,
        prompt_tokens=b.prompt_tokens - mark.prompt_tokens,
        completion_tokens=b.completion_tokens - mark.completion_tokens,
    )
    s.usage_mark = PassUsage(calls=b.llm_calls, prompt_tokens=b.prompt_tokens, completion_tokens=b.completion_tokens)
    xp.final_plan_state = frozen_copy(run.plan)
    if check and (problems := xp.exit_problems()):
        raise runner.error("D->A/B", PASS_CONSISTENCY, "; ".join(problems), "execution_pass")
    s.passes.append(xp)
    s.current = None
