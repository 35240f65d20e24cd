"""Approval of tool calls: before a call that needs it, a person sees the step, the tool and its exact arguments
and approves (as is, or with edited arguments, checked against the tool's schema again) or denies it."""

from __future__ import annotations

from typing import Any

from aeon.application.errors import ApprovalExpired
from aeon.application.llm.calling import ToolTurn
from aeon.application.plans.validation import ToolResolver
from aeon.application.ports import ApproverPort
from aeon.domain.approval import ApprovalDecision, ApprovalRecord, ApprovalRequest, Verdict
from aeon.domain.plan import PlanStep
from aeon.domain.progress import ApprovalDecided, ApprovalRequested
from aeon.domain.tools import ToolSpec

NOBODY = "no approver"  # who denies a call when nobody can be asked (no terminal, no durable run, no callback)


class Approvals:
    """Asks the approver about each call that needs it and records the request and the decision."""

    def __init__(self, approver: ApproverPort | None, run: ToolTurn, resolver: ToolResolver, *, timeout: float) -> None:
        self._approver, self._run, self._resolver, self._timeout = approver, run, resolver, timeout

    @staticmethod
    def needed(step: PlanStep, spec: ToolSpec | None) -> bool:
        return step.requires_approval or (spec is not None and spec.requires_approval)

    async def ask(self, step: PlanStep) -> ApprovalDecision:
        """The decision on `step`'s call (edited arguments already checked); raises ApprovalExpired when none came
        within run.approval_timeout, and the run's own expiry when its time ran out first."""
        assert step.tool is not None
        run, state = self._run, self._run.state
        request = ApprovalRequest(
            run_id=state.correlation_id,
            key=f"p{state.pass_number}:{step.step_id}",
            step_id=step.step_id,
            description=step.description,
            tool=step.tool,
            args=dict(step.args),
            pass_number=state.pass_number,
        )
        run.record.event("approval_requested", **_fields(request))
        run.record.notify(ApprovalRequested(request=request))
        decision = await self._decision(request)
        if decision.approved and decision.args is not None and (problem := self._misfit(step, decision.args)):
            decision = ApprovalDecision(
                verdict=Verdict.DENY, by=decision.by, reason=f"the edited arguments do not fit the tool: {problem}"
            )
        edited = decision.args is not None and decision.args != request.args
        run.record.event(
            "approval_decided",
            key=request.key,
            step_id=step.step_id,
            tool=step.tool,
            verdict=decision.verdict.value,
            by=decision.by,
            reason=decision.reason,
            edited=edited,
            args_before=request.args if edited else None,
            args=decision.args if edited else None,
        )
        run.record.notify(ApprovalDecided(step_id=step.step_id, decision=decision, edited=edited))
        state.approval_decided(ApprovalRecord(request=request, decision=decision, edited=edited))
        return decision

    async def _decision(self, request: ApprovalRequest) -> ApprovalDecision:
        if self._approver is None:
            reason = "the tool call needs approval and nobody can be asked (no terminal, no durable run, no callback)"
            return ApprovalDecision(verdict=Verdict.DENY, by=NOBODY, reason=reason)
        left = self._run.remaining_seconds()
        timeout = self._timeout if left is None else min(self._timeout, left)
        decision = await self._approver.decide(request, self._run.state, wait_seconds=timeout)
        if decision is not None:
            return decision
        if left is not None and left <= self._timeout:
            raise self._run.out_of_time(f"waiting for approval of tool {request.tool!r} in step {request.step_id}")
        raise ApprovalExpired(
            f"no decision on tool {request.tool!r} in step {request.step_id} within run.approval_timeout "
            f"({self._timeout:g} s)"
        )

    def _misfit(self, step: PlanStep, args: dict[str, Any]) -> str | None:
        edited = PlanStep(step_id=step.step_id, description=step.description, tool=step.tool, args=args)
        problems = self._resolver.check(edited).problems
        return "; ".join(problems) or None


def _fields(request: ApprovalRequest) -> dict[str, Any]:
    return {
        "key": request.key,
        "step_id": request.step_id,
        "tool": request.tool,
        "args": request.args,
        "pass_number": request.pass_number,
    }
