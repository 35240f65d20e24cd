"""The orchestrator: plan → execute under TTL and resource caps, logging one record per cycle (FR-001..005)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from aeon.application.context import RunContext
from aeon.application.errors import BudgetExhausted, LLMError, UnrecoverableOutput
from aeon.application.executor import Executor
from aeon.application.gateway import LLMGateway
from aeon.application.planner import Planner
from aeon.application.ports import ClockPort, LLMPort, LoggerPort, MemoryPort, ProgressPort, ToolPort
from aeon.application.result import ErrorInfo, RunResult, RunStatus
from aeon.application.supervisor import Supervisor
from aeon.application.validation import annotate
from aeon.domain.budget import BudgetLimits, ExpirationType, TTLExpirationResponse
from aeon.domain.errors import AeonError
from aeon.domain.plan import Plan, StepStatus
from aeon.domain.records import CycleRecord


class RunSettings(msgspec.Struct, frozen=True, kw_only=True):
    ttl: int = 3
    max_llm_calls: int = 30
    max_tokens: int | None = None
    max_seconds: float | None = None
    max_plan_steps: int = 10
    llm_max_tokens: int | None = None


class Orchestrator:
    """Runs a request end to end and always returns a RunResult.

    Ports are injected; `new_id` and `clock` make runs reproducible in tests. TTL counts passes of the loop and is
    checked at the pass boundary; the LLM-call cap is checked before every step and around every LLM call, and a
    running tool call is never interrupted.
    """

    def __init__(
        self,
        *,
        llm: LLMPort,
        tools: ToolPort,
        memory: MemoryPort,
        logger: LoggerPort,
        progress: ProgressPort,
        clock: ClockPort,
        settings: RunSettings,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self._llm = llm
        self._tools = tools
        self._memory = memory
        self._logger = logger
        self._progress = progress
        self._clock = clock
        self._settings = settings
        self._new_id = new_id

    async def run(self, request: str, *, plan: Plan | None = None) -> RunResult:
        s = self._settings
        cid = self._new_id()
        self._logger.bind(cid)
        limits = BudgetLimits(
            ttl=s.ttl, max_llm_calls=s.max_llm_calls, max_tokens=s.max_tokens, max_seconds=s.max_seconds
        )
        ctx = RunContext(
            correlation_id=cid,
            request=request,
            limits=limits,
            logger=self._logger,
            progress=self._progress,
            clock=self._clock,
        )
        gateway = LLMGateway(self._llm, ctx, max_tokens=s.llm_max_tokens)
        specs = self._tools.list()
        supervisor = Supervisor(gateway, ctx, specs)
        executor = Executor(tools=self._tools, memory=self._memory, gateway=gateway, supervisor=supervisor, ctx=ctx)
        self._logger.emit(
            "run_start",
            request=request,
            ttl=s.ttl,
            max_llm_calls=s.max_llm_calls,
            tools=[t.name for t in specs],
            plan_given=plan is not None,
        )
        try:
            if ctx.budget.ttl_remaining <= 0:
                raise BudgetExhausted(
                    "TTL is 0 at the pass boundary; nothing ran", expiration_type=ExpirationType.PHASE_BOUNDARY
                )
            ctx.notify("phase", {"phase": "PLAN", "pass": 1})
            if plan is None:
                planner = Planner(gateway, supervisor, specs, ctx, max_steps=s.max_plan_steps)
                plan = await planner.plan(request)
            ctx.state.plan = plan
            for problem in annotate(plan, {t.name: t for t in specs}):
                ctx.warn(str(problem))
            ctx.notify("plan", {"plan": plan.to_dict()})
            self._cycle(ctx, 0, None)
            ctx.phase = "EXECUTE"
            ctx.notify("phase", {"phase": "EXECUTE", "pass": 1})
            for step in list(plan.steps):
                ctx.check_caps(f"before step {step.step_id}", needs_llm=executor.needs_llm(step))
                await executor.execute(plan, step)
                self._cycle(ctx, step.step_index, step.step_id)
            ctx.budget.ttl_remaining -= 1
            ctx.state.ttl_remaining = ctx.budget.ttl_remaining
            return self._finish(ctx, RunStatus.COMPLETED)
        except BudgetExhausted as exc:
            return self._expired(ctx, exc)
        except (UnrecoverableOutput, LLMError) as exc:
            self._fail_running_step(ctx)
            return self._finish(ctx, RunStatus.ERROR, exc)
        except AeonError as exc:
            self._fail_running_step(ctx)
            return self._finish(ctx, RunStatus.ERROR, exc)

    # -- records ------------------------------------------------------------------------------------------------
    def _cycle(self, ctx: RunContext, number: int, step_id: str | None) -> None:
        buf = ctx.take_cycle()
        plan = ctx.state.plan
        record = CycleRecord(
            step_number=number,
            plan_state=plan.to_dict() if plan else None,
            llm_output=buf.llm_output,
            supervisor_actions=buf.supervisor_actions,
            tool_calls=buf.tool_calls,
            ttl_remaining=ctx.budget.ttl_remaining,
            errors=buf.errors,
            phase=ctx.phase,
            step_id=step_id,
        )
        self._logger.emit("cycle", **msgspec.to_builtins(record))

    def _fail_running_step(self, ctx: RunContext) -> None:
        plan = ctx.state.plan
        if plan is None:
            return
        for step in plan.steps:
            if step.status is StepStatus.RUNNING:
                step.transition(StepStatus.FAILED)

    def _expired(self, ctx: RunContext, exc: BudgetExhausted) -> RunResult:
        self._fail_running_step(ctx)
        if ctx.cycle.llm_output or ctx.cycle.errors or ctx.cycle.supervisor_actions:
            ctx.error(str(exc))
            self._cycle(ctx, _index(ctx), ctx.state.current_step)
        plan = ctx.state.plan
        response = TTLExpirationResponse(
            expiration_type=exc.expiration_type,
            phase=ctx.phase,
            pass_number=1,
            plan_state=plan.to_dict() if plan else None,
            execution_results=_outputs(plan),
            message=f"stopped: {exc}",
            ttl_remaining=0,
        )
        self._logger.emit("ttl_expired", **msgspec.to_builtins(response))
        return self._finish(ctx, RunStatus.TTL_EXPIRED, expiration=response)

    def _finish(
        self,
        ctx: RunContext,
        status: RunStatus,
        exc: AeonError | None = None,
        expiration: TTLExpirationResponse | None = None,
    ) -> RunResult:
        error = None
        if exc is not None:
            error = ErrorInfo(
                code=exc.code,
                message=str(exc),
                phase=ctx.phase,
                step_id=ctx.state.current_step,
                correlation_id=ctx.correlation_id,
            )
            ctx.error(f"{exc.code}: {exc}")
            self._cycle(ctx, _index(ctx), ctx.state.current_step)
        plan = ctx.state.plan
        b = ctx.budget
        result = RunResult(
            status=status,
            correlation_id=ctx.correlation_id,
            request=ctx.request,
            plan=plan.to_dict() if plan else None,
            outputs=_outputs(plan),
            budget={
                "ttl": b.limits.ttl,
                "ttl_remaining": b.ttl_remaining,
                "max_llm_calls": b.limits.max_llm_calls,
                "llm_calls": b.llm_calls,
                "prompt_tokens": b.prompt_tokens,
                "completion_tokens": b.completion_tokens,
                "cached_tokens": b.cached_tokens,
            },
            counts=msgspec.to_builtins(ctx.counters),
            warnings=list(ctx.warnings),
            ttl_expiration=expiration,
            error=error,
        )
        self._logger.emit(
            "run_end",
            status=status.value,
            error=msgspec.to_builtins(error) if error else None,
            llm_calls=b.llm_calls,
            counts=result.counts,
        )
        return result


def _index(ctx: RunContext) -> int:
    """The step number of the cycle in progress: the running step's index, or 0 while planning."""
    plan, sid = ctx.state.plan, ctx.state.current_step
    if plan is None or sid is None:
        return 0
    return next((s.step_index for s in plan.steps if s.step_id == sid), 0)


def _outputs(plan: Plan | None) -> dict[str, Any]:
    if plan is None:
        return {}
    return {
        s.step_id: {"status": s.status.value, "output": s.step_output, "mode": s.mode, "errors": s.errors}
        for s in plan.steps
    }


__all__: Sequence[str] = ("Orchestrator", "RunSettings")
