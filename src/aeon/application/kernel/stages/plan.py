"""Phase A: profile the task and make the plan (in one call on a first pass; a later pass boundary re-profiles alone),
allocate TTL within the cap."""

from __future__ import annotations

import msgspec

from aeon.application.errors import UnrecoverableOutput
from aeon.application.judges.adaptive_depth import allocate
from aeon.application.kernel.run import PlanningRun, RunSettings
from aeon.application.kernel.wiring import Planning
from aeon.application.llm.planner import PROFILE_TARGET
from aeon.application.llm.profiler import static_profile
from aeon.application.recorder import fields
from aeon.domain.advisories import ProfileClamped
from aeon.domain.context import ProfileAndPlanInput
from aeon.domain.log_run import ProfileClampedRecord, TtlAllocatedRecord
from aeon.domain.phases import Component, Stage, Transition
from aeon.domain.plan import Plan
from aeon.domain.profile import AdaptiveDepthConfiguration, ReasoningMode, TaskProfile
from aeon.domain.run_state import RunState


class PlanReady(msgspec.Struct, kw_only=True):
    """Phase A's result; its fields named as the A->B and D->A/B contracts name them."""

    task_profile: TaskProfile
    depth: AdaptiveDepthConfiguration
    initial_plan: Plan
    ttl_remaining: int | None  # None when none is left: the contract asks for TTL > 0
    next_pass_state: RunState

    @property
    def next(self) -> Stage:
        return Stage.VALIDATE_PLAN


async def profile_and_plan(run: PlanningRun, services: Planning, given: Plan | None) -> PlanReady:
    state, settings = run.state, services.settings
    run.enter(ProfileAndPlanInput())
    authored = given is None and not state.plan_given  # the model writes the plan: its prompt shows the thread
    conversation = state.conversation or None
    fixed = _fixed_depth(settings, given is not None or state.plan_given)
    if fixed is not None:  # nothing for a profile to decide: no profiling call
        profile, depth = static_profile(fixed.adjustment_reason), fixed
        source = "not inferred (no profiling call)"
    else:
        if state.plan is None and given is None and not state.profiles:  # the first profile and plan: one call
            profile, given = await _profile_with_plan(run, services, conversation)
            source = "inferred with the plan in one call (profile_and_plan)"
        else:  # a plan is given, or kept by a re-profiling pass
            profile = await _profile(run, services)
            source = "inferred alone (profile)"
        depth = allocate(profile, cap=settings.ttl, revised_because=state.revise, escalations=state.escalations)
    state.profiled(profile, depth)
    run.meter.allocate(depth.allocated_ttl, state.pass_number)  # allocated_ttl counts whole-run cycles
    run.record.log(TtlAllocatedRecord(profile_version=profile.profile_version, profile_source=source, **fields(depth)))
    run.enter(ProfileAndPlanInput(task_profile=profile))
    if state.plan is None:  # a re-profiling pass keeps the plan it refines
        ask = services.planner.plan
        if given is None:
            given = await services.runner.step(
                Transition.A_TO_B, Component.PLANNER, lambda: ask(state.request, conversation)
            )
        if authored and not state.seen.trusted:  # written after reading untrusted data (a thread's earlier answer)
            for step in given.steps:
                step.origin = step.origin.join(state.seen)
        state.planned(given)
    plan = run.plan
    run.record.plan_made(plan)
    run.record.cycle(step_number=0, step_id=None, plan=plan, label=run.label)
    ttl = state.budget.ttl_remaining
    return PlanReady(
        task_profile=profile,
        depth=depth,
        initial_plan=plan,
        ttl_remaining=ttl if ttl > 0 else None,
        next_pass_state=state,
    )


async def _profile_with_plan(
    run: PlanningRun, services: Planning, conversation: str | None
) -> tuple[TaskProfile, Plan]:
    """The profile and the plan from one call; a profile half left incomplete fails as the profiler's (not
    retryable), anything else as the planner's."""
    runner, request = services.runner, run.state.request

    async def ask() -> tuple[TaskProfile, Plan]:
        try:
            return await services.planner.profile_and_plan(request, conversation)
        except UnrecoverableOutput as exc:
            if exc.target == PROFILE_TARGET:
                raise runner.classify(exc, Transition.A_TO_B, Component.PROFILER) from exc
            raise

    return await runner.step(Transition.A_TO_B, Component.PLANNER, ask)


async def _profile(run: PlanningRun, services: Planning) -> TaskProfile:
    state, infer = run.state, services.profiler.infer
    previous, version, notes = state.profile, len(state.profiles) + 1, "; ".join(state.revise) or "nothing yet"
    profile, clamp = await services.runner.step(
        Transition.A_TO_B,
        Component.PROFILER,
        lambda: infer(state.request, version=version, previous=previous, notes=notes),
    )
    if clamp:
        run.record.log(ProfileClampedRecord(note=clamp, profile_version=version))
        state.advise(ProfileClamped(pass_number=state.pass_number, reason=clamp))
    return profile


def _fixed_depth(settings: RunSettings, plan_given: bool) -> AdaptiveDepthConfiguration | None:
    """The depth when a profile would decide nothing (evaluation off, or a fixed TTL with a given plan), else None."""
    if settings.evaluate and not (settings.ttl_given and plan_given):
        return None
    reason = (
        "evaluation is off (run.evaluate: false): one pass, TTL as configured"
        if not settings.evaluate
        else "TTL given (--ttl) and plan given (--plan): no profiling call, TTL as given"
    )
    return AdaptiveDepthConfiguration(
        detected_complexity="very_low",
        allocated_ttl=settings.ttl,
        reasoning_mode=ReasoningMode.SHALLOW,
        adjustment_reason=reason,
    )
