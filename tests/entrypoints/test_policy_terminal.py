"""On a terminal, a call the capability policy asks about says why and which outputs it came from."""

from __future__ import annotations

import asyncio
import io

from aeon.adapters.tools import ToolRegistry, register_builtins
from aeon.application.kernel.run import RunSettings
from aeon.application.redaction import NO_SECRETS
from aeon.domain.approval import ApprovalRequest
from aeon.domain.budget import BudgetState
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.run_state import RunState
from aeon.entrypoints.approval import TerminalApprover


def test_the_terminal_shows_why_the_policy_asks_and_the_provenance_chain() -> None:
    registry = ToolRegistry()
    register_builtins(registry)
    out = io.StringIO()
    approver = TerminalApprover(registry, NO_SECRETS, read=lambda: "d\n", out=out)
    request = ApprovalRequest(
        run_id="r",
        key="p2:s2",
        step_id="s2",
        description="Send the file",
        tool="echo",
        args={"text": "the file"},
        pass_number=2,
        reason="step s2 was written after reading untrusted data and calls tool 'echo'",
        provenance=("tool:fetch_page",),
    )
    state = RunState(correlation_id="r", request="q", started_at="t", budget=BudgetState.start(RunSettings().limits()))
    decision = asyncio.run(approver.decide(request, state, wait_seconds=5))
    assert decision is not None and not decision.approved
    assert "asked because step s2 was written after reading untrusted data" in out.getvalue()
    assert "(from tool:fetch_page)" in out.getvalue()


def test_an_edit_on_the_terminal_may_pass_an_earlier_output_by_reference() -> None:
    registry = ToolRegistry()
    register_builtins(registry)
    out = io.StringIO()
    typed = iter(["e\n", '{"text": {"$from": "s9"}}\n', "e\n", '{"text": {"$from": "s1"}}\n'])
    approver = TerminalApprover(registry, NO_SECRETS, read=lambda: next(typed), out=out)
    s1 = PlanStep(step_id="s1", description="Say hi", tool="echo", args={"text": "hi"})
    s1.status, s1.step_output = StepStatus.COMPLETE, "hi"
    s2 = PlanStep(step_id="s2", description="Say it again", tool="echo", args={"text": "bye"})
    state = RunState(correlation_id="r", request="q", started_at="t", budget=BudgetState.start(RunSettings().limits()))
    state.plan = Plan(goal="g", steps=[s1, s2])
    request = ApprovalRequest(
        run_id="r",
        key="p1:s2",
        step_id="s2",
        description="Say it again",
        tool="echo",
        args={"text": "bye"},
        pass_number=1,
    )
    decision = asyncio.run(approver.decide(request, state, wait_seconds=5))
    assert "takes $from 's9', which is not in the plan: try again" in out.getvalue()
    assert decision is not None and decision.approved and decision.args == {"text": {"$from": "s1"}}
