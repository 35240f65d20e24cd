"""The orchestrator: a deterministic multi-pass loop walking the phase contracts A → B → C → D (02 US1, 05).

One cycle: A (profile, TTL allocation, initial plan; first pass only) or B (plan validation) → C (C1 execute,
C2 evaluate, C3 refine) → D (continue / escalate / halt). TTL counts cycles, is checked before every phase entry
and decremented once per completed cycle; resource caps are checked around every LLM call and before every step.
The phase sequence depends only on the configuration and the outcomes, never on the text of an answer.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

import msgspec

from aeon.application.adaptive_depth import DepthOutcome, allocate, decide
from aeon.application.context import RunContext
from aeon.application.convergence import ConvergenceEngine
from aeon.application.errors import BudgetExhausted, LLMTruncated, UnrecoverableOutput
from aeon.application.executor import Executor
from aeon.application.gateway import LLMGateway
from aeon.application.outcome import assemble, error_info, expiration, step_results
from aeon.application.phase_runner import PhaseRunner
from aeon.application.planner import Planner
from aeon.application.ports import ClockPort, LLMPort, LoggerPort, MemoryPort, ProgressPort, ToolPort
from aeon.application.profiler import Profiler, describe, static_profile
from aeon.application.prompts import templates
from aeon.application.recursive_planner import RecursivePlanner
from aeon.application.refiner import Refiner
from aeon.application.result import RunResult, RunStatus
from aeon.application.semantic_validation import SemanticValidator
from aeon.application.supervisor import Supervisor, describe_tools
from aeon.application.validation import annotate
from aeon.domain.budget import BudgetLimits, ExpirationType, TTLExpirationResponse
from aeon.domain.errors import AeonError
from aeon.domain.evaluation import ArtifactType, ConvergenceAssessment, ConvergenceCriteria, SemanticValidationReport
from aeon.domain.history import ExecutionHistory, ExecutionPass, TimingInformation
from aeon.domain.phases import CONTRACTS, PASS_CONSISTENCY, PassPhase, Phase
from aeon.domain.plan import Plan, StepStatus
from aeon.domain.profile import AdaptiveDepthConfiguration, DepthDecision, ReasoningMode, TaskProfile
from aeon.domain.records import CycleRecord
from aeon.domain.refinement import RefinementAction

_b = msgspec.to_builtins


class RunSettings(msgspec.Struct, frozen=True, kw_only=True):
    ttl: int = 3
    max_llm_calls: int = 30
    max_tokens: int | None = None
    max_seconds: float | None = None
    max_plan_steps: int = 10
    llm_max_tokens: int | None = None
    evaluate: bool = True  # False: one plan → execute pass, no profile, evaluation or refinement
    criteria: ConvergenceCriteria = ConvergenceCriteria()


class _Run:
    """The per-run wiring and what the loop has learned so far."""

    def __init__(self, o: Orchestrator, ctx: RunContext) -> None:
        s, specs = o.settings, o.tools.list()
        self.ctx, self.specs = ctx, specs
        preamble = templates.PREAMBLE.render({"tools": describe_tools(specs)})
        gateway = LLMGateway(o.llm, ctx, max_tokens=s.llm_max_tokens, preamble=preamble)
        supervisor = Supervisor(gateway, ctx, specs)
        self.planner = Planner(supervisor, specs, max_steps=s.max_plan_steps)
        self.executor = Executor(tools=o.tools, memory=o.memory, gateway=gateway, supervisor=supervisor, ctx=ctx)
        self.profiler = Profiler(supervisor)
        self.validator = SemanticValidator(supervisor, specs, new_id=o.new_id)
        self.engine = ConvergenceEngine(supervisor, s.criteria, [t.name for t in specs])
        self.refiner = Refiner(supervisor, specs)
        self.recursive = RecursivePlanner({t.name: t for t in specs})
        self.runner = PhaseRunner(ctx)
        self.history = ExecutionHistory(
            execution_id=ctx.correlation_id,
            task_input=ctx.request,
            configuration={
                "ttl": s.ttl,
                "max_llm_calls": s.max_llm_calls,
                "evaluate": s.evaluate,
                "convergence_criteria": _b(s.criteria),
                "adaptive_depth_settings": {"ttl_cap": s.ttl},
            },
        )
        self.profile: TaskProfile | None = None
        self.depth: AdaptiveDepthConfiguration | None = None
        self.report: SemanticValidationReport | None = None
        self.assessments: list[ConvergenceAssessment] = []
        self.current: ExecutionPass | None = None
        self.usage_mark = (0, 0, 0)
        self.revise: list[str] = []  # why the coming cycle re-enters phase A
        self.escalations = 0  # passes added by phase D, kept when a re-profiling reallocates TTL

    @property
    def plan(self) -> Plan:
        assert self.ctx.state.plan is not None
        return self.ctx.state.plan

    def profile_fields(self) -> dict[str, Any]:
        assert self.profile is not None
        return {"task_profile": _b(self.profile)}


class Orchestrator:
    """Runs a request to a structured RunResult: converged, expired, failed or interrupted — never an exception,
    except EventLogUnavailable when the log cannot take its first record (so nothing is spent unrecorded)."""

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
        self.llm, self.tools, self.memory, self.logger = llm, tools, memory, logger
        self.progress, self.clock, self.settings, self.new_id = progress, clock, settings, new_id

    async def run(self, request: str, *, plan: Plan | None = None) -> RunResult:
        s, cid = self.settings, self.new_id()
        self.logger.bind(cid)
        limits = BudgetLimits(
            ttl=s.ttl, max_llm_calls=s.max_llm_calls, max_tokens=s.max_tokens, max_seconds=s.max_seconds
        )
        ctx = RunContext(
            correlation_id=cid,
            request=request,
            limits=limits,
            logger=self.logger,
            progress=self.progress,
            clock=self.clock,
        )
        r = _Run(self, ctx)
        self.logger.emit(
            "run_start",
            request=request,
            ttl=s.ttl,
            max_llm_calls=s.max_llm_calls,
            evaluate=s.evaluate,
            tools=[t.name for t in r.specs],
            plan_given=plan is not None,
            llm=self.llm.describe(),
        )
        try:
            await self._loop(r, plan)
            return self._finish(r, RunStatus.COMPLETED)
        except BudgetExhausted as exc:
            return self._expired(r, exc)
        except AeonError as exc:
            self._fail_running_step(ctx)
            return self._finish(r, RunStatus.ERROR, exc)
        except asyncio.CancelledError:  # Ctrl-C or SIGTERM (the CLI cancels the run): end it on the record
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            self._fail_running_step(ctx)
            ctx.error("interrupted")
            return self._finish(r, RunStatus.INTERRUPTED)

    # -- the loop -------------------------------------------------------------------------------------------------
    async def _loop(self, r: _Run, given: Plan | None) -> None:
        ctx, runner = r.ctx, r.runner
        next_phase = Phase.A
        while True:
            ctx.pass_number += 1
            runner.timings = []
            pass_start = ctx.clock.now().isoformat()
            if next_phase is Phase.A:
                self._boundary(ctx, Phase.A)
                await runner.phase(Phase.A, "A->B", lambda: self._phase_a(r, given))
            self._boundary(ctx, Phase.B)
            await runner.phase(Phase.B, "B->C", lambda: self._phase_b(r))
            self._boundary(ctx, Phase.C)
            xp = self._open_pass(r, pass_start)
            await runner.phase(Phase.C, "C->D", partial(self._phase_c, r, xp))
            self._boundary(ctx, Phase.D)
            outcome = await runner.phase(Phase.D, "D->A/B", partial(self._phase_d, r, xp))
            ctx.budget.ttl_remaining += outcome.ttl_delta - 1  # exactly one decrement per complete cycle
            r.escalations += outcome.ttl_delta
            ctx.state.ttl_remaining = ctx.budget.ttl_remaining
            self._close_pass(r, xp)
            if outcome.decision is DepthDecision.HALT:
                return
            r.revise = outcome.revise_profile
            next_phase = Phase.A if r.revise else Phase.B

    def _boundary(self, ctx: RunContext, phase: Phase) -> None:
        if ctx.budget.ttl_remaining <= 0:
            raise BudgetExhausted(
                f"TTL is 0 at the boundary before phase {phase.value} of pass {ctx.pass_number}",
                expiration_type=ExpirationType.PHASE_BOUNDARY,
                phase=phase.value,
            )

    async def _phase_a(self, r: _Run, given: Plan | None) -> None:
        """Profile the task (re-profile it at a later pass boundary), allocate TTL within the cap, make the plan."""
        ctx, s, runner = r.ctx, self.settings, r.runner
        ctx.phase = "PLAN"
        ctx.enter("A")
        if s.evaluate:
            previous, version, notes = r.profile, len(r.history.profiles) + 1, "; ".join(r.revise) or "nothing yet"
            profile, clamp = await runner.step(
                "A->B",
                "profiler",
                lambda: r.profiler.infer(ctx.request, version=version, previous=previous, notes=notes),
            )
            r.profile = profile
            if clamp:
                self.logger.emit("profile_clamped", note=clamp, profile_version=version)
                r.history.advisories.append(
                    {"kind": "profile_clamped", "pass_number": ctx.pass_number, "reason": clamp}
                )
            r.depth = allocate(profile, cap=s.ttl, revised_because=r.revise, escalations=r.escalations)
        else:
            r.profile = static_profile()
            r.depth = AdaptiveDepthConfiguration(
                detected_complexity="very_low",
                allocated_ttl=s.ttl,
                reasoning_mode=ReasoningMode.SHALLOW,
                adjustment_reason="evaluation is off (run.evaluate: false): one pass, TTL as configured",
            )
        r.history.profiles.append(_b(r.profile))
        # allocated_ttl counts whole-run cycles; the cycle now running always completes
        ctx.budget.ttl_remaining = ctx.state.ttl_remaining = max(1, r.depth.allocated_ttl - (ctx.pass_number - 1))
        self.logger.emit("ttl_allocated", **_b(r.depth))
        ctx.enter("A", **r.profile_fields())
        if ctx.state.plan is None:  # a re-profiling pass keeps the plan it refines
            ctx.state.plan = given or await runner.step("A->B", "planner", lambda: r.planner.plan(ctx.request))
        inputs = {**r.profile_fields(), "initial_plan": r.plan.to_dict(), "ttl_remaining": ctx.budget.ttl_remaining}
        if missing := CONTRACTS["A->B"].missing_inputs(inputs):
            raise r.runner.error(
                "A->B", CONTRACTS["A->B"].failure("INCOMPLETE_PROFILE"), f"missing {', '.join(missing)}", "orchestrator"
            )
        ctx.notify("plan", {"plan": r.plan.to_dict()})
        self._cycle(ctx, 0, None)

    async def _phase_b(self, r: _Run) -> None:
        """Validate the plan before it runs: steps exist, fragments are whole, tool problems are flagged."""
        ctx = r.ctx
        ctx.phase = "PLAN"
        ctx.enter("B", **r.profile_fields(), initial_plan=r.plan.to_dict())
        contract = CONTRACTS["B->C"]
        if not r.plan.steps:
            raise r.runner.error("B->C", contract.failure("MISSING_STEPS"), "the plan has no steps", "validator")

        async def check_fragments() -> None:
            if bad := [s.step_id or f"#{s.step_index}" for s in r.plan.steps if not (s.step_id and s.description)]:
                detail = f"steps without id or description: {', '.join(bad)}"
                raise r.runner.error("B->C", contract.failure("INVALID_FRAGMENT_FIELDS"), detail, "validator")
            ids = [s.step_id for s in r.plan.steps]
            if dup := sorted({i for i in ids if ids.count(i) > 1}):
                detail = f"duplicate step ids: {', '.join(dup)}"
                raise r.runner.error("B->C", contract.failure("INVALID_FRAGMENT_STRUCTURE"), detail, "validator")

        await r.runner.step("B->C", "validator", check_fragments)
        for problem in annotate(r.plan, {t.name: t for t in r.specs}):
            ctx.warn(str(problem))

    async def _phase_c(self, r: _Run, xp: ExecutionPass) -> None:
        ctx, s, plan = r.ctx, self.settings, r.plan
        ctx.phase = "EXECUTE" if ctx.pass_number == 1 else "RE_EXECUTE"
        ctx.enter("C1", **r.profile_fields(), refined_plan=plan.to_dict())
        for step in list(plan.steps):
            if step.status is not StepStatus.PENDING:
                continue
            ctx.check_caps(f"before step {step.step_id}", needs_llm=r.executor.needs_llm(step))
            await r.runner.step("C->D", "executor", partial(r.executor.execute, plan, step), retry=False)
            self._cycle(ctx, plan.step(step.step_id).step_index, step.step_id)
        xp.execution_results = step_results(plan)
        ctx.state.current_step = None
        if not s.evaluate:
            return
        ctx.phase = "EVALUATE"
        ctx.enter("C2", **r.profile_fields(), plan_state=plan.to_dict(), execution_results=xp.execution_results)
        profile_text = describe(r.profile) if r.profile else "unknown"
        r.report = report = await r.runner.step(
            "C->D",
            "validator",
            lambda: r.validator.validate(
                request=ctx.request,
                profile_text=profile_text,
                plan=plan,
                execution_results=xp.execution_results,
                artifact_type=ArtifactType.CROSS_PHASE,
            ),
        )
        assessment = await r.runner.step(
            "C->D",
            "convergence",
            lambda: r.engine.assess(
                request=ctx.request,
                profile_text=profile_text,
                plan=plan,
                report=report,
                tool_calls=ctx.state.tool_history,
            ),
        )
        r.assessments.append(assessment)
        xp.evaluation_results = {"validation_report": _b(report), "convergence": _b(assessment)}
        ctx.notify("assessment", _b(assessment))
        for question in r.recursive.follow_up_questions(plan, report, ctx.pass_number):  # FR-011, every pass
            r.history.advisories.append(question)
            self.logger.emit("advisory", **question)
        if assessment.converged or ctx.pass_number >= s.ttl:
            return  # converged, or no cycle can follow within the cap: nothing to refine for
        ctx.phase = "REFINE"
        ctx.enter(
            "C3",
            **r.profile_fields(),
            plan_state=plan.to_dict(),
            execution_results=xp.execution_results,
            evaluation_results=xp.evaluation_results,
        )
        problems = [*assessment.reason_codes, *assessment.detected_issues]
        issues = [_b(i) for i in report.issues]

        async def propose() -> list[RefinementAction] | None:
            try:
                return await r.refiner.propose(
                    request=ctx.request, profile_text=profile_text, plan=plan, problems=problems, issues=issues
                )
            except (UnrecoverableOutput, LLMTruncated) as exc:  # FR-067: keep the current plan and go on
                r.history.advisories.append(
                    {"kind": "refinement_failed", "pass_number": ctx.pass_number, "detail": str(exc)}
                )
                self.logger.emit("refinement_failed", detail=str(exc))
                return None

        actions = await r.runner.step("C->D", "refiner", propose, retry=False)
        if actions is None:
            return
        accepted = r.recursive.accept(plan, actions, report, pass_number=ctx.pass_number)
        xp.refinement_changes = [_b(o) for o in accepted.outcomes]
        for o in accepted.outcomes:
            self.logger.emit("refinement", **_b(o))
        for advisory in accepted.advisories:
            r.history.advisories.append(advisory)
            self.logger.emit("advisory", **advisory)
        applied = sum(o.applied for o in accepted.outcomes)
        ctx.notify(
            "refined",
            {"applied": applied, "rejected": len(accepted.outcomes) - applied, "advisories": accepted.advisories},
        )

    async def _phase_d(self, r: _Run, xp: ExecutionPass) -> DepthOutcome:
        ctx = r.ctx
        evaluation = xp.evaluation_results or {"skipped": "evaluation is off"}
        ctx.enter("D", **r.profile_fields(), plan_state=r.plan.to_dict(), evaluation_results=evaluation)
        assert r.depth is not None
        outcome = decide(
            r.depth,
            assessment=r.assessments[-1] if self.settings.evaluate else None,
            report=r.report,
            history=r.assessments,
            passes_done=ctx.pass_number,
            cap=self.settings.ttl,
            ttl_remaining=ctx.budget.ttl_remaining,
            recursion=any(
                (c["applied"] and c["action"]["action_type"] == "SUBPLAN_CREATE") or c["manual_intervention"]
                for c in xp.refinement_changes
            ),
            revisions=len(r.history.profiles) - 1,
        )
        r.depth = outcome.configuration
        xp.adaptive_depth = {
            **_b(r.depth),
            "decision": outcome.decision.value,
            "decision_reason": outcome.reason,
            "next_phase": "A" if outcome.revise_profile else "B",
            "profile_revision_reasons": outcome.revise_profile,
        }
        self.logger.emit("depth_decision", decision=outcome.decision.value, **_b(r.depth))
        ctx.notify("depth", {"decision": outcome.decision.value, "reason": outcome.reason})
        return outcome

    # -- passes and records ---------------------------------------------------------------------------------------
    def _open_pass(self, r: _Run, start: str) -> ExecutionPass:
        ctx = r.ctx
        xp = ExecutionPass(
            pass_number=ctx.pass_number,
            phase=PassPhase.EXECUTE if ctx.pass_number == 1 else PassPhase.RE_EXECUTE,
            plan_state=r.plan.to_dict(),
            ttl_remaining=ctx.budget.ttl_remaining,
            timing_information=TimingInformation(start_time=start),
            task_profile=_b(r.profile),
            adaptive_depth=_b(r.depth),
        )
        if problems := xp.entry_problems():
            raise r.runner.error("C->D", PASS_CONSISTENCY, "; ".join(problems), "execution_pass")
        r.current = xp
        return xp

    def _close_pass(self, r: _Run, xp: ExecutionPass, *, check: bool = True) -> None:
        ctx, b = r.ctx, r.ctx.budget
        end = ctx.clock.now().isoformat()
        start = xp.timing_information.start_time
        xp.timing_information = TimingInformation(
            start_time=start,
            end_time=end,
            duration_seconds=max((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds(), 0.0),
        )
        xp.phases = list(r.runner.timings)
        calls, prompt, completion = r.usage_mark
        xp.llm_usage = {
            "calls": b.llm_calls - calls,
            "prompt_tokens": b.prompt_tokens - prompt,
            "completion_tokens": b.completion_tokens - completion,
        }
        r.usage_mark = (b.llm_calls, b.prompt_tokens, b.completion_tokens)
        xp.final_plan_state = r.plan.to_dict()
        if check and (problems := xp.exit_problems()):
            raise r.runner.error("D->A/B", PASS_CONSISTENCY, "; ".join(problems), "execution_pass")
        r.history.passes.append(xp)
        r.current = None

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
        self.logger.emit("cycle", pass_number=ctx.pass_number, **_b(record))

    def _fail_running_step(self, ctx: RunContext) -> None:
        for step in ctx.state.plan.steps if ctx.state.plan else []:
            if step.status is StepStatus.RUNNING:
                step.transition(StepStatus.FAILED)

    # -- endings --------------------------------------------------------------------------------------------------
    def _expired(self, r: _Run, exc: BudgetExhausted) -> RunResult:
        ctx, cut = r.ctx, r.current
        self._fail_running_step(ctx)
        if ctx.cycle.llm_output or ctx.cycle.errors or ctx.cycle.supervisor_actions:
            ctx.error(str(exc))
            self._cycle(ctx, _index(ctx), ctx.state.current_step)
        if cut is not None:
            cut.execution_results = step_results(ctx.state.plan)
            self._close_pass(r, cut, check=False)
        completed = [p for p in r.history.passes if p is not cut]
        last = r.assessments[-1] if r.assessments else None
        response = expiration(exc, ctx, completed=completed, cut=cut, last=last)
        self.logger.emit("ttl_expired", **_b(response))
        return self._finish(r, RunStatus.TTL_EXPIRED, expired=response)

    def _finish(
        self, r: _Run, status: RunStatus, exc: AeonError | None = None, expired: TTLExpirationResponse | None = None
    ) -> RunResult:
        ctx = r.ctx
        error = error_info(exc, ctx) if exc is not None else None
        if exc is not None:
            ctx.error(f"{exc.code}: {exc}")
            self._cycle(ctx, _index(ctx), ctx.state.current_step)
        last = r.assessments[-1] if r.assessments else None
        result = assemble(
            ctx, status, r.history, last=last, evaluate=self.settings.evaluate, error=error, expired=expired
        )
        self.logger.emit(
            "run_end",
            status=status.value,
            converged=result.converged,
            passes=result.passes,
            error=_b(error),
            llm_calls=ctx.budget.llm_calls,
            counts=result.counts,
            expired_cap=expired.cap if expired else None,
        )
        return result


def _index(ctx: RunContext) -> int:
    """The step number of the cycle in progress: the running step's index, or 0 outside step execution."""
    plan, sid = ctx.state.plan, ctx.state.current_step
    if plan is None or sid is None:
        return 0
    return next((s.step_index for s in plan.steps if s.step_id == sid), 0)
