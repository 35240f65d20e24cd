"""The orchestrator: a deterministic multi-pass loop walking the phase contracts A → B → C → D (02 US1, 05).

One cycle: A (profile, TTL allocation, initial plan; first pass, or when the profile is revised) or B (plan
validation) → C (C1 execute, C2 evaluate, C3 refine) → D (continue / escalate / halt). TTL counts cycles, is checked
before every phase entry and decremented once per completed cycle; resource caps are checked around every LLM call
and before every step. The phase sequence depends only on the configuration and the outcomes, never on the text of
an answer. Before every phase the run state is one serializable record (a checkpoint), from which `resume` goes on.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from aeon.application import tracing
from aeon.application.errors import ApprovalExpired, BudgetExhausted, InternalError
from aeon.application.kernel.outcome import assemble, error_info, expiration
from aeon.application.kernel.passes import close_pass, open_pass
from aeon.application.kernel.phase_runner import PhaseWork
from aeon.application.kernel.run import Run, RunSettings
from aeon.application.kernel.stages.check import validate_plan
from aeon.application.kernel.stages.decide import Decided, decide_depth
from aeon.application.kernel.stages.plan import profile_and_plan
from aeon.application.kernel.stages.work import work_pass
from aeon.application.kernel.wiring import RunServices, wire
from aeon.application.ports import (
    ApproverPort,
    CheckpointPort,
    ClockPort,
    LLMPort,
    LoggerPort,
    MemoryPort,
    ProgressPort,
    ToolPort,
    TracerPort,
)
from aeon.application.redaction import NO_SECRETS, Redactor
from aeon.application.results import RunResult, RunStatus
from aeon.application.tracing import NULL_TRACER
from aeon.domain.budget import BudgetState
from aeon.domain.errors import AeonError
from aeon.domain.expiry import TTLExpirationResponse
from aeon.domain.history import step_results
from aeon.domain.log_run import RunResumedRecord, RunStartRecord
from aeon.domain.phases import Halt, Phase, Stage
from aeon.domain.plan import Plan, StepStatus
from aeon.domain.run_state import RunState
from aeon.domain.threads import ThreadContext

__all__ = ["Orchestrator", "RunSettings"]


class Orchestrator:
    """Runs a request to a structured RunResult: converged, expired, failed or interrupted — never an exception,
    except EventLogUnavailable when the log cannot take its first record (so nothing is spent unrecorded) and a
    bug, which propagates once the run is ended on the record (run_end with error AEON.INTERNAL)."""

    def __init__(
        self,
        *,
        llm: LLMPort,
        tools: ToolPort,
        memory: MemoryPort,
        logger: LoggerPort,
        progress: ProgressPort | None,
        clock: ClockPort,
        settings: RunSettings,
        checkpoint: CheckpointPort | None = None,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        tracer: TracerPort = NULL_TRACER,
        redactor: Redactor = NO_SECRETS,
        approver: ApproverPort | None = None,
    ) -> None:
        self.llm, self.tools, self.memory, self.logger = llm, tools, memory, logger
        self.progress, self.clock, self.settings, self.new_id = progress, clock, settings, new_id
        self.checkpoint, self.tracer, self.redactor, self.approver = checkpoint, tracer, redactor, approver

    async def run(
        self,
        request: str,
        *,
        plan: Plan | None = None,
        correlation_id: str | None = None,
        started_at: str | None = None,
        thread: ThreadContext | None = None,
    ) -> RunResult:
        """Run `request` (or the given plan). A durable runner passes the run's id and start time, so that a run
        re-executed after a crash asks the model exactly what it asked the first time. A run of a `thread` starts
        with its conversation so far and its memory (domain/threads)."""
        state = RunState(
            correlation_id=correlation_id or self.new_id(),
            request=request,
            started_at=started_at or self.clock.now().isoformat(),
            budget=BudgetState.start(self.settings.limits()),
            plan_given=plan is not None,
        )
        if thread is not None:
            state.threaded(thread)
            for key, value in thread.memory.items():
                await self.memory.write(key, value)
        return await self._drive(state, given=plan)

    async def resume(self, state: RunState) -> RunResult:
        """Go on with a run from the phase boundary its state was recorded at; memory is restored from the record."""
        for key, value in state.memory.items():
            await self.memory.write(key, value)
        return await self._drive(state, given=None)

    async def _drive(self, state: RunState, *, given: Plan | None) -> RunResult:
        """The run inside its `invoke_agent aeon` span (GenAI semantic conventions)."""
        info = self.llm.describe()
        attrs = {
            tracing.OPERATION: "invoke_agent",
            "gen_ai.agent.name": "aeon",
            "gen_ai.conversation.id": state.correlation_id,
            tracing.PROVIDER: info.provider,
            tracing.REQUEST_MODEL: info.model,
        }
        with self.tracer.span("invoke_agent aeon", attrs) as span:
            result = await self._go(state, given=given)
            spent = result.budget
            span.set({tracing.INPUT_TOKENS: spent.prompt_tokens, tracing.OUTPUT_TOKENS: spent.completion_tokens})
            span.set({"aeon.status": result.status.value, "aeon.passes": result.passes, "aeon.cost_usd": spent.cost})
            if result.error is not None:
                span.fail(result.error.code)
            return result

    async def _go(self, state: RunState, *, given: Plan | None) -> RunResult:
        self.logger.bind(state.correlation_id)
        redactor, tracer = self.redactor, self.tracer
        run = Run(state, logger=self.logger, progress=self.progress, clock=self.clock, tracer=tracer, redactor=redactor)
        services = wire(
            run,
            llm=self.llm,
            tools=self.tools,
            memory=self.memory,
            settings=self.settings,
            new_id=self.new_id,
            approver=self.approver,
        )
        self._started(run, services, resumed=state.pass_number > 0)
        try:
            await self._loop(run, services, given)
            return self._finish(run, RunStatus.COMPLETED)
        except BudgetExhausted as exc:
            return self._expired(run, services, exc)
        except ApprovalExpired as exc:
            _fail_running_step(run)
            return self._finish(run, RunStatus.APPROVAL_EXPIRED, exc)
        except AeonError as exc:
            _fail_running_step(run)
            return self._finish(run, RunStatus.ERROR, exc)
        except asyncio.CancelledError:  # Ctrl-C or SIGTERM (the CLI cancels the run): end it on the record
            if (task := asyncio.current_task()) is not None:
                task.uncancel()
            _fail_running_step(run)
            run.record.error("interrupted")
            self._cycle(run)  # the cycle cut short is on the record, its step failed
            return self._finish(run, RunStatus.INTERRUPTED)
        except Exception as exc:  # a bug: the log still ends with run_end, then the CLI reports it (exit 4)
            _fail_running_step(run)
            self._finish(run, RunStatus.ERROR, InternalError(f"{type(exc).__name__}: {exc}"))
            raise

    def _started(self, run: Run, services: RunServices, *, resumed: bool) -> None:
        state, settings = run.state, self.settings
        fields: dict[str, Any] = {
            "ttl": settings.ttl,
            "max_llm_calls": settings.max_llm_calls,
            "max_seconds": settings.max_seconds,
        }
        tools = [t.name for t in services.specs]
        llm, given = self.llm.describe(), state.plan_given
        fields |= {"request": state.request, "evaluate": settings.evaluate, "tools": tools, "plan_given": given}
        if resumed:
            run.record.log(
                RunResumedRecord(
                    **fields, llm=llm.fields(), from_stage=state.next_stage.value, pass_number=state.pass_number
                )
            )
        else:
            run.record.log(RunStartRecord(**fields, llm=llm.fields()))

    # -- the loop -------------------------------------------------------------------------------------------------
    async def _loop(self, run: Run, services: RunServices, given: Plan | None) -> None:
        """Each stage's result names the next one, held by the phase runner to the contract it hands over by."""
        state, stages = run.state, self._stages(run, services, given)
        stage: Stage | Halt = state.next_stage
        while isinstance(stage, Stage):
            state.stands_before(stage)
            if not state.in_cycle:  # a new cycle begins (with A or B)
                state.begin_cycle(self.clock.now().isoformat())
            await self._boundary(run, stage)
            stage = (await stages[stage]()).next

    def _stages(
        self, run: Run, services: RunServices, given: Plan | None
    ) -> dict[Stage, Callable[[], Awaitable[PhaseWork]]]:
        """The stage that enters each phase, run by the phase runner under that phase's contracts."""
        runner, state = services.runner, run.state
        return {
            Stage.PROFILE_AND_PLAN: lambda: runner.phase(
                Phase.A, partial(profile_and_plan, run, services.planning, given)
            ),
            Stage.VALIDATE_PLAN: lambda: runner.phase(Phase.B, partial(validate_plan, run, services.checking)),
            Stage.EXECUTE: lambda: runner.phase(
                Phase.C, partial(work_pass, run, services.working, state.current or open_pass(state, runner))
            ),
            Stage.DECIDE: partial(self._decide, run, services),
        }

    async def _decide(self, run: Run, services: RunServices) -> Decided:
        """Phase D, the cycle's end: one TTL decrement, the pass closed, the reasons to re-profile kept."""
        state = run.state
        assert state.current is not None
        decided = await services.runner.phase(Phase.D, partial(decide_depth, run, self.settings, state.current))
        outcome = decided.outcome
        run.meter.end_cycle(outcome.ttl_delta)
        close_pass(state, run.clock, services.runner, state.current)
        revise = outcome.revise_profile if isinstance(decided.next, Stage) else None
        state.end_cycle(escalation=outcome.ttl_delta, revise=revise)
        return decided

    async def _boundary(self, run: Run, stage: Stage) -> None:
        """Before every phase: the TTL check, then the run state recorded for a checkpoint."""
        run.boundary(stage)
        if self.checkpoint is not None:
            run.state.remember(await self.memory.search(""))
            await self.checkpoint.save(run.state)

    # -- endings --------------------------------------------------------------------------------------------------
    def _expired(self, run: Run, services: RunServices, exc: BudgetExhausted) -> RunResult:
        state, cut = run.state, run.state.current
        _fail_running_step(run)
        if run.record.cycle_pending or run.current_step is not None:  # the cycle the expiry cut short
            run.record.error(str(exc))
            self._cycle(run)
        if cut is not None:
            cut.execution_results = step_results(state.plan)
            close_pass(state, run.clock, services.runner, cut, check=False)
        completed = [p for p in state.passes if p is not cut]
        response = expiration(exc, run, completed=completed, cut=cut)
        run.record.expired(response)
        return self._finish(run, RunStatus.TTL_EXPIRED, expired=response)

    def _finish(
        self, run: Run, status: RunStatus, exc: AeonError | None = None, expired: TTLExpirationResponse | None = None
    ) -> RunResult:
        error = error_info(exc, run) if exc is not None else None
        if exc is not None:
            run.record.error(f"{exc.code}: {exc}")
            self._cycle(run)
        # The log redacts its run_end record itself (LoggerPort); the caller gets the result redacted of the
        # configured secrets only (what the run produced reaches it whole): every durable or shared sink redacts it
        # fully again (Redactor.for_caller)
        assembled = assemble(run, self.settings, status, error=error, expired=expired)
        run.record.run_end(assembled, expired_cap=assembled.ttl_expiration.cap if assembled.ttl_expiration else None)
        return self.redactor.for_caller().struct(assembled, RunResult)

    def _cycle(self, run: Run) -> None:
        """The cycle in progress, closed at the end of the run: the running step's number, or 0 outside steps."""
        plan, sid = run.state.plan, run.current_step
        number = next((step.step_index for step in plan.steps if step.step_id == sid), 0) if plan and sid else 0
        run.record.cycle(step_number=number, step_id=sid, plan=plan, label=run.label)


def _fail_running_step(run: Run) -> None:
    for step in run.state.plan.steps if run.state.plan else []:
        if step.status is StepStatus.RUNNING:
            step.transition(StepStatus.FAILED)
