"""On a terminal, a call the capability policy asks about says why and which outputs it came from."""

from __future__ import annotations

import asyncio
import io

from aeon.adapters.approval import TerminalApprover
from aeon.adapters.tools import ToolRegistry, register_builtins
from aeon.application.kernel.run import RunSettings
from aeon.application.redaction import NO_SECRETS
from aeon.application.runs import edited_problem
from aeon.domain.approval import ApprovalRequest
from aeon.domain.budget import BudgetState
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.run_state import RunState


def test_the_terminal_shows_why_the_policy_asks_and_the_provenance_chain() -> None:
    registry = ToolRegistry()
    register_builtins(registry)
    out = io.StringIO()
    approver = TerminalApprover(registry, NO_SECRETS, check=edited_problem, read=lambda: "d\n", out=out)
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


def _asking(*typed: str) -> tuple[TerminalApprover, io.StringIO]:
    """A terminal approver over the built-in tools, read the lines `typed`; what it shows."""
    registry = ToolRegistry()
    register_builtins(registry)
    out, lines = io.StringIO(), iter(line + "\n" for line in typed)
    return TerminalApprover(registry, NO_SECRETS, check=edited_problem, read=lambda: next(lines), out=out), out


def test_edited_arguments_that_name_an_argument_twice_are_asked_for_again() -> None:
    # json.loads would keep the last value silently: the terminal reads edits as aeon approve --args and aeon ui do
    approver, out = _asking("e", '{"text": "a", "text": "b"}', "e", '{"text": "c"}')
    request = ApprovalRequest(
        run_id="r", key="p1:s1", step_id="s1", description="Echo", tool="echo", args={"text": "x"}, pass_number=1
    )
    state = RunState(correlation_id="r", request="q", started_at="t", budget=BudgetState.start(RunSettings().limits()))
    decision = asyncio.run(approver.decide(request, state, wait_seconds=5))
    assert decision is not None and decision.approved and decision.args == {"text": "c"}
    assert "names 'text' twice: give each argument once: try again" in out.getvalue()


def test_an_edit_on_the_terminal_may_pass_an_earlier_output_by_reference() -> None:
    approver, out = _asking("e", '{"text": {"$from": "s9"}}', "e", '{"text": {"$from": "s1"}}')
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
