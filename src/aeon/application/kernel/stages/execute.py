"""Phase C1: run the pending steps strictly in order, one cycle record per step."""

from __future__ import annotations

from functools import partial

from aeon.application.kernel.executor import Executor
from aeon.application.kernel.phase_runner import PhaseRunner
from aeon.application.kernel.run import ExecutingRun
from aeon.domain.context import ExecuteInput
from aeon.domain.history import StepResult, step_results
from aeon.domain.phases import Component, Transition
from aeon.domain.plan import StepStatus


async def execute_steps(run: ExecutingRun, runner: PhaseRunner, executor: Executor) -> dict[str, StepResult]:
    plan = run.plan
    run.enter(ExecuteInput(task_profile=run.profile, refined_plan=plan))
    await executor.before_pass(plan)  # a consequential call fed by untrusted data is asked about (or refused) now
    for step in list(plan.steps):
        if step.status is not StepStatus.PENDING:
            continue
        check = executor.resolve(step)
        run.check_caps(f"before step {step.step_id}", needs_llm=not check.runnable)
        work = partial(executor.execute, plan, step, check)
        await runner.step(Transition.C_TO_D, Component.EXECUTOR, work, retry=False)
        current = plan.step(step.step_id)
        run.record.cycle(step_number=current.step_index, step_id=step.step_id, plan=plan, label=run.label)
    run.current_step = None
    return step_results(plan)
