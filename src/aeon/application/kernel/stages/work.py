"""Phase C: execute the pending steps (C1), then evaluate (C2) and, when not converged, refine the plan (C3)."""

from __future__ import annotations

import msgspec

from aeon.application.errors import BudgetExhausted
from aeon.application.kernel.run import ExecutingRun
from aeon.application.kernel.stages.evaluate import evaluate_pass
from aeon.application.kernel.stages.execute import execute_steps
from aeon.application.kernel.stages.refine import refine_plan, unusable
from aeon.application.kernel.wiring import Working
from aeon.domain.context import EVALUATION_OFF
from aeon.domain.history import Evaluation, ExecutionPass, StepResult
from aeon.domain.log_pass import RefinementSkippedRecord
from aeon.domain.phases import Stage
from aeon.domain.refinement import ActionOutcome


class PassWork(msgspec.Struct, kw_only=True):
    """Phase C's result; its fields named as the B->C and C->D contracts name them."""

    execution_results: dict[str, StepResult]
    evaluation_results: Evaluation | str  # with run.evaluate: false, the hand-over says so instead
    refinements: list[ActionOutcome]

    @property
    def next(self) -> Stage:
        return Stage.DECIDE


async def work_pass(run: ExecutingRun, services: Working, current: ExecutionPass) -> PassWork:
    runner = services.runner
    results = await execute_steps(run, runner, services.executor)
    current.execution_results = results
    if not services.settings.evaluate:
        return PassWork(execution_results=results, evaluation_results=EVALUATION_OFF, refinements=[])
    evaluation = await evaluate_pass(run, runner, services.evaluator, results)
    current.evaluation_results = evaluation
    refinements: list[ActionOutcome] = []
    if not evaluation.convergence.converged:
        if (skip := unusable(run, services.settings)) is None:  # a later pass can run the refined plan
            refinements = await refine_plan(run, runner, services.refiner, services.gate, results, evaluation)
        else:
            run.record.log(RefinementSkippedRecord(reason=skip.reason, cap=skip.cap.cap if skip.cap else "ttl"))
            if skip.cap is not None:  # the run cannot improve: it ends now rather than at the cap
                raise BudgetExhausted.mid_phase(skip.cap, f"before a refinement it could not use: {skip.reason}")
    current.refinement_changes = refinements
    return PassWork(execution_results=results, evaluation_results=evaluation, refinements=refinements)
