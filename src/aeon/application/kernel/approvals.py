"""Approval of tool calls: before a call that needs it, a person sees the step, the tool and its exact arguments
and approves (as is, or with edited arguments, checked against the tool's schema again) or denies it. A call needs
it when the tool or the step says so, or when the capability policy asks (application/policy.py): then the request
shows why and which outputs the step came from, and with nobody to ask the call is refused (PolicyRefused)."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.application.errors import ApprovalExpired
from aeon.application.llm.calling import ToolTurn
from aeon.application.plans.flow import flagged
from aeon.application.plans.references import ReferenceFailed, has_references, resolve
from aeon.application.plans.validation import ToolResolver
from aeon.application.policy import NeedsApproval, Policy, PolicyRefused, decide
from aeon.application.ports import ApproverPort
from aeon.domain.approval import ApprovalDecision, ApprovalRecord, ApprovalRequest, Verdict
from aeon.domain.log_run import ApprovalDecidedRecord, ApprovalRequestedRecord
from aeon.domain.plan import ExecutionMode, Plan, PlanStep, StepStatus
from aeon.domain.progress import ApprovalDecided, ApprovalRequested
from aeon.domain.provenance import Label
from aeon.domain.tools import ToolSpec

NOBODY = "no approver"  # who denies a call when nobody can be asked (no terminal, no durable run, no callback)


class Admitted(msgspec.Struct, frozen=True, kw_only=True):
    """What may be called: `args` (references resolved, an approver's edits applied), or why not: `problem` (a
    reference that cannot be resolved, resolved arguments that do not fit) or `denied` (a person's decision)."""

    args: dict[str, Any] = msgspec.field(default_factory=dict)
    problem: str | None = None
    denied: ApprovalDecision | None = None


class Approvals:
    """Asks the approver about each call that needs it and records the request and the decision."""

    def __init__(
        self,
        approver: ApproverPort | None,
        run: ToolTurn,
        resolver: ToolResolver,
        *,
        timeout: float,
        policy: Policy | None = None,
    ) -> None:
        self._approver, self._run, self._resolver, self._timeout = approver, run, resolver, timeout
        self._policy = policy or Policy()

    def output_label(self, spec: ToolSpec | None, step: PlanStep) -> Label:
        """The label of what `step`'s tool returned: the tool's (as the policy reads it)."""
        return self._policy.output_label(spec) if spec is not None else Label.of(f"tool:{step.tool}", trusted=False)

    @staticmethod
    def needed(step: PlanStep, spec: ToolSpec | None) -> bool:
        return step.requires_approval or (spec is not None and spec.requires_approval)

    async def admit(self, plan: Plan, step: PlanStep, spec: ToolSpec | None) -> Admitted:
        """The call `step` may make now: its references resolved and checked, the policy's verdict on it, and a
        person's decision when the tool, the step or the policy asks for one. Raises PolicyRefused when the policy
        needs consent and nobody can be asked."""
        resolved = self._resolved(plan, step)
        if isinstance(resolved, Admitted):
            return resolved
        args, labels = resolved
        if self._consented(step):  # asked before the pass, from the plan's data flow, and approved
            return Admitted(args=args)
        verdict = decide(step, spec, labels, self._policy) if spec is not None else None
        asks = verdict if isinstance(verdict, NeedsApproval) else None
        if asks is not None and self._approver is None:
            raise _refused(asks)
        if asks is None and not Approvals.needed(step, spec):
            return Admitted(args=args)
        decision = await self.ask(step, args, asks)
        if not decision.approved:
            return Admitted(denied=decision)
        if decision.args is not None:  # edited: its `$from` references are resolved like the plan's
            step.args = dict(decision.args)
            edited = self._resolved(plan, step)
            return edited if isinstance(edited, Admitted) else Admitted(args=edited[0])
        return Admitted(args=dict(args))

    def _resolved(self, plan: Plan, step: PlanStep) -> tuple[dict[str, Any], dict[str, Label]] | Admitted:
        """`step`'s arguments with its references resolved and checked, and their labels; or why it cannot call."""
        if not has_references(step.args):
            return dict(step.args), {}
        try:
            args, labels = resolve(plan, step)
        except ReferenceFailed as exc:
            return Admitted(problem=str(exc))
        resolved = PlanStep(step_id=step.step_id, description=step.description, tool=step.tool, args=args)
        if problems := self._resolver.check(resolved).problems:
            return Admitted(problem=f"once its references are resolved: {'; '.join(problems)}")
        return args, labels

    async def before_pass(self, plan: Plan) -> None:
        """The policy on the plan's data flow, before the pass's first tool call: each pending step whose call would
        need consent is asked about now (a denied one fails before anything runs, an approved one is not asked
        again at its call); with nobody to ask, the run is refused now (PolicyRefused), before any call."""
        run = self._run
        for flag in flagged(plan, self._runnable, self._policy, run.state.seen):
            step = flag.step
            if self._consented(step):
                continue
            if self._approver is None:
                refused = _refused(flag.asks)
                run.current_step = step.step_id
                step.errors.append(str(refused))
                step.transition(StepStatus.FAILED)
                raise refused
            decision = await self.ask(step, None, flag.asks)
            if not decision.approved:
                step.mode = ExecutionMode.DENIED
                step.errors.append(f"denied by {decision.by}: {decision.reason or 'no reason given'}")
                run.record.error(f"step {step.step_id}: tool {step.tool!r} call denied by {decision.by}")
                step.transition(StepStatus.FAILED)
            elif decision.args is not None:
                step.args = dict(decision.args)

    def _runnable(self, step: PlanStep) -> ToolSpec | None:
        """The tool `step` calls as it stands (None when a repair or a fallback will decide: checked at the call)."""
        check = self._resolver.check(step)
        return check.spec if not check.problems else None

    def _consented(self, step: PlanStep) -> bool:
        """Whether a person approved `step`'s call in this pass already (the decisions are in the checkpoint)."""
        key = f"p{self._run.state.pass_number}:{step.step_id}"
        return any(a.request.key == key and a.decision.approved for a in self._run.state.approvals)

    async def ask(
        self, step: PlanStep, args: dict[str, Any] | None = None, asks: NeedsApproval | None = None
    ) -> ApprovalDecision:
        """The decision on `step`'s call with `args` (its own by default; edited arguments already checked); raises
        ApprovalExpired when none came within run.approval_timeout, and the run's own expiry when its time ran out
        first."""
        assert step.tool is not None
        run, state = self._run, self._run.state
        request = ApprovalRequest(
            run_id=state.correlation_id,
            key=f"p{state.pass_number}:{step.step_id}",
            step_id=step.step_id,
            description=step.description,
            tool=step.tool,
            args=dict(step.args if args is None else args),
            pass_number=state.pass_number,
            reason=asks.reason if asks is not None else None,
            provenance=asks.chain if asks is not None else (),
        )
        run.record.log(_requested(request))
        run.record.notify(ApprovalRequested(request=request))
        decision = await self._decision(request)
        if decision.approved and decision.args is not None and (problem := self._misfit(step, decision.args)):
            decision = ApprovalDecision(
                verdict=Verdict.DENY, by=decision.by, reason=f"the edited arguments do not fit the tool: {problem}"
            )
        edited = decision.args is not None and decision.args != request.args
        decided = ApprovalDecidedRecord(
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
        run.record.log(decided)
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


def _refused(asks: NeedsApproval) -> PolicyRefused:
    chain = f" (from {', '.join(asks.chain)})" if asks.chain else ""
    return PolicyRefused(f"{asks.reason}{chain}; nobody can be asked to approve it")


def _requested(request: ApprovalRequest) -> ApprovalRequestedRecord:
    return ApprovalRequestedRecord(
        key=request.key,
        step_id=request.step_id,
        tool=request.tool,
        args=request.args,
        pass_number=request.pass_number,
        reason=request.reason,
        provenance=list(request.provenance),
    )
