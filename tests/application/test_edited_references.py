"""A person who edits the arguments of a call that waits for approval may pass an earlier step's output by
reference, `{"$from": "s1", "path": "email"}`: the edit is checked as `aeon validate` checks a plan's references
(a step in the plan, one that runs before, a path its tool can return) and, its step done, by the value it gives;
the call is then made with the value, not the reference."""

from __future__ import annotations

from typing import Any

import pytest

from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.errors import InputError
from aeon.application.runs import RecordedRuns, approval
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Pending, Verdict
from aeon.domain.budget import BudgetLimits, BudgetState
from aeon.domain.plan import Plan, PlanStep, StepStatus
from aeon.domain.run_state import RunState

from harness import plan_json, run


def _registry(sent: list[str]) -> ToolRegistry:
    @tool(effect="read")
    def lookup(name: str) -> dict[str, str]:
        """The contact details of a person."""
        return {"email": f"{name}@example.com"}

    @tool(requires_approval=True)
    def publish(to: str) -> str:
        """Publish to `to`; a person approves each call."""
        sent.append(to)
        return "published"

    registry = ToolRegistry()
    register_builtins(registry)
    registry.register_function(lookup)
    registry.register_function(publish)
    return registry


LOOKUP = {"step_id": "s1", "description": "Find Ana", "tool": "lookup", "args": {"name": "ana"}}
PUBLISH = {"step_id": "s2", "description": "Publish", "tool": "publish", "args": {"to": "everyone"}}
LATER = {"step_id": "s3", "description": "Look Bob up", "tool": "lookup", "args": {"name": "bob"}}


class _Port:
    """A record whose run waits on s2's publish call, s1 done (its output Ana's email), s3 to come."""

    def __init__(self, plan: Plan | None) -> None:
        self.plan, self.sent = plan, list[ApprovalDecision]()
        self._tools = _registry([])

    def pending(self, run_id: str) -> Pending:
        request = ApprovalRequest(
            run_id=run_id,
            key="p1:s2",
            step_id="s2",
            description="Publish",
            tool="publish",
            args={"to": "everyone"},
            pass_number=1,
        )
        budget = BudgetState(limits=BudgetLimits(ttl=1, max_llm_calls=1), ttl_remaining=1)
        return Pending(request=request, plan=self.plan, budget=budget)

    def tools(self, run_id: str) -> ToolRegistry:
        return self._tools

    def answer(self, run_id: str, decision: ApprovalDecision, *, go_on: bool) -> None:
        self.sent.append(decision)


def _waiting() -> Plan:
    s1, s2, s3 = (PlanStep(**step) for step in (LOOKUP, PUBLISH, LATER))  # type: ignore[arg-type]
    s1.status, s1.step_output = StepStatus.COMPLETE, {"email": "ana@example.com"}
    return Plan(goal="publish", steps=[s1, s2, s3])


def _ref(source: str, path: str | None = None) -> dict[str, Any]:
    return {"to": {"$from": source} | ({"path": path} if path is not None else {})}


def test_an_edit_may_pass_an_earlier_output_by_reference() -> None:
    port = _Port(_waiting())
    runs = RecordedRuns(port)  # type: ignore[arg-type]
    assert runs.check("r1", '{"to": {"$from": "s1", "path": "email"}}') == []
    runs.answer("r1", approval("ana", _ref("s1", "email")), go_on=False)
    assert port.sent[0].args == _ref("s1", "email")  # sent as written: the run resolves it at the call


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (_ref("s9"), "argument 'to' takes $from 's9', which is not in the plan"),
        (_ref("s3", "email"), "argument 'to' takes $from 's3', which does not run before it"),
        (_ref("s2"), "argument 'to' takes $from 's2', which does not run before it"),
        (_ref("s1", "phone"), "step s1's output has no 'phone'"),
        (_ref("s1"), "once its references are resolved: args for tool 'publish' invalid at to"),
    ],
)
def test_an_edited_reference_is_checked_like_a_plans(args: dict[str, Any], said: str) -> None:
    port = _Port(_waiting())
    with pytest.raises(InputError, match="do not fit tool 'publish'") as caught:
        RecordedRuns(port).answer("r1", approval("ana", args), go_on=True)  # type: ignore[arg-type]
    assert said in str(caught.value) and port.sent == []


def test_a_reference_is_refused_when_the_record_holds_no_plan() -> None:
    problem = RecordedRuns(_Port(None)).problem("r1", _ref("s1", "email"))  # type: ignore[arg-type]
    assert problem is not None and "needs the run's plan" in problem


def test_the_approved_call_is_made_with_the_referenced_value(tmp_path):
    sent: list[str] = []

    class Editor:
        async def decide(self, request: ApprovalRequest, snapshot: RunState, *, wait_seconds: float) -> Any:
            return ApprovalDecision(verdict=Verdict.APPROVE, by="ana", args=_ref("s1", "email"))

    r = run(tmp_path, [plan_json(LOOKUP, PUBLISH)], tools=_registry(sent), approver=Editor())
    assert r.doc["status"] == "completed" and sent == ["ana@example.com"]
    (call,) = [x for x in r.records() if x["event"] == "tool_call" and x["tool"] == "publish"]
    assert call["args"] == {"to": "ana@example.com"}
