"""Human approval of tool calls in the kernel: a call that needs it waits for a decision; approved it runs (with
edited arguments checked against the tool's schema), denied it never runs and its step fails as denied; no decision
in time ends the run approval_expired; a refinement may not plan a denied call again."""

from __future__ import annotations

import io
from typing import Any

import msgspec

from aeon.adapters.approval import CallbackApprover
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.judges.refinement_gate import RefinementGate
from aeon.application.views.inspection import analyse
from aeon.application.views.inspection_text import inspection_text
from aeon.domain.approval import ApprovalDecision, ApprovalRecord, ApprovalRequest, Verdict
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.progress import ApprovalDecided, ApprovalRequested
from aeon.domain.refinement import RefinementAction, RefinementActionType
from aeon.domain.run_state import RefinementLedger, RunState

from harness import plan_json, run

SEND = {"step_id": "s1", "description": "Send the report", "tool": "send", "args": {"to": "ops", "body": "hi"}}


def _tools(calls: list[dict[str, Any]], *, approval: bool = True) -> ToolRegistry:
    @tool(example={"to": "a", "body": "b"}, requires_approval=approval)
    def send(to: str, body: str) -> str:
        """Send `body` to `to` (an effect a person approves first)."""
        calls.append({"to": to, "body": body})
        return f"sent to {to}"

    registry = ToolRegistry()
    register_builtins(registry)
    registry.register_function(send)
    return registry


def _asking(answer: ApprovalDecision | bool | None, asked: list[ApprovalRequest]) -> Any:
    class Approver:
        async def decide(self, request: ApprovalRequest, snapshot: RunState, *, wait_seconds: float) -> Any:
            asked.append(request)
            if answer is None or isinstance(answer, ApprovalDecision):
                return answer
            return await CallbackApprover(lambda _: answer).decide(request, snapshot, wait_seconds=wait_seconds)

    return Approver()


def test_an_approved_call_runs_once_after_the_person_saw_its_exact_arguments(tmp_path):
    calls: list[dict[str, Any]] = []
    asked: list[ApprovalRequest] = []
    r = run(tmp_path, [plan_json(SEND)], tools=_tools(calls), approver=_asking(True, asked))
    assert r.doc["status"] == "completed"
    assert calls == [{"to": "ops", "body": "hi"}]
    assert [(a.step_id, a.tool, a.args) for a in asked] == [("s1", "send", {"to": "ops", "body": "hi"})]
    events = [e for e in r.progress.events if isinstance(e, ApprovalRequested | ApprovalDecided)]
    assert [type(e) for e in events] == [ApprovalRequested, ApprovalDecided]
    decided = [x for x in r.records() if x["event"] == "approval_decided"]
    assert decided[0]["verdict"] == "approve" and decided[0]["by"] == "callback" and decided[0]["edited"] is False
    requested = [x for x in r.records() if x["event"] == "approval_requested"]
    assert requested[0]["args"] == {"to": "ops", "body": "hi"}


def test_edited_arguments_replace_the_call_and_are_on_the_record(tmp_path):
    calls: list[dict[str, Any]] = []
    edit = ApprovalDecision(verdict=Verdict.APPROVE, by="ana", args={"to": "ops", "body": "hello, edited"})
    r = run(tmp_path, [plan_json(SEND)], tools=_tools(calls), approver=_asking(edit, []))
    assert calls == [{"to": "ops", "body": "hello, edited"}]
    decided = next(x for x in r.records() if x["event"] == "approval_decided")
    assert decided["edited"] is True and decided["by"] == "ana"
    assert decided["args_before"] == {"to": "ops", "body": "hi"}
    assert decided["args"] == {"to": "ops", "body": "hello, edited"}


def test_edited_arguments_that_do_not_fit_the_schema_are_not_run(tmp_path):
    calls: list[dict[str, Any]] = []
    edit = ApprovalDecision(verdict=Verdict.APPROVE, by="ana", args={"to": 5})
    r = run(tmp_path, [plan_json(SEND)], tools=_tools(calls), approver=_asking(edit, []))
    assert calls == []
    (step,) = r.doc["plan"]["steps"]
    assert step["status"] == "failed" and step["mode"] == "denied"
    assert any("do not fit" in e for e in step["errors"])


def test_a_denied_call_never_runs_and_its_step_says_who_denied_it_and_why(tmp_path):
    calls: list[dict[str, Any]] = []
    deny = ApprovalDecision(verdict=Verdict.DENY, by="ana", reason="not on a Friday")
    r = run(tmp_path, [plan_json(SEND)], tools=_tools(calls), approver=_asking(deny, []))
    assert calls == []
    (step,) = r.doc["plan"]["steps"]
    assert step["status"] == "failed" and step["mode"] == "denied"
    assert "denied by ana: not on a Friday" in step["errors"]
    assert not [x for x in r.records() if x["event"] == "tool_call"]  # no call made, none recorded as made
    assert r.result.history is not None
    shown = io.StringIO()
    shown.write(inspection_text(analyse(msgspec.to_builtins(r.result.history))))
    assert "approval pass 1 step s1 send {'to': 'ops', 'body': 'hi'}: deny by ana: not on a Friday" in shown.getvalue()


def test_with_nobody_to_ask_the_call_is_denied_not_made(tmp_path):
    calls: list[dict[str, Any]] = []
    r = run(tmp_path, [plan_json(SEND)], tools=_tools(calls))
    assert calls == []
    (step,) = r.doc["plan"]["steps"]
    assert step["mode"] == "denied" and any("nobody can be asked" in e for e in step["errors"])


def test_no_decision_within_the_approval_timeout_ends_the_run_with_its_own_status(tmp_path):
    calls: list[dict[str, Any]] = []
    asked: list[ApprovalRequest] = []
    r = run(tmp_path, [plan_json(SEND)], tools=_tools(calls), approver=_asking(None, asked), approval_timeout=5.0)
    assert r.doc["status"] == "approval_expired"
    assert r.doc["error"]["code"] == "AEON.APPROVAL.EXPIRED" and "5 s" in r.doc["error"]["message"]
    assert calls == [] and len(asked) == 1
    assert [s["status"] for s in r.doc["plan"]["steps"]] == ["failed"]
    assert r.records()[-1]["event"] == "run_end"


def test_a_step_of_a_hand_written_plan_can_ask_for_approval_of_any_tool(tmp_path):
    calls: list[dict[str, Any]] = []
    asked: list[ApprovalRequest] = []
    step = PlanStep(
        step_id="s1", description="Send", tool="send", args={"to": "a", "body": "b"}, requires_approval=True
    )
    r = run(
        tmp_path,
        [],
        tools=_tools(calls, approval=False),
        plan=Plan(goal="g", steps=[step]),
        approver=_asking(True, asked),
    )
    assert [a.step_id for a in asked] == ["s1"] and calls == [{"to": "a", "body": "b"}]
    assert r.doc["status"] == "completed"


def test_a_tool_that_needs_no_approval_is_never_asked_about(tmp_path):
    calls: list[dict[str, Any]] = []
    asked: list[ApprovalRequest] = []
    run(tmp_path, [plan_json(SEND)], tools=_tools(calls, approval=False), approver=_asking(True, asked))
    assert asked == [] and len(calls) == 1


def test_a_refinement_may_not_plan_a_denied_call_again_as_it_was() -> None:
    asked = ApprovalRequest(
        run_id="r", key="p1:s1", step_id="s1", description="Send", tool="send", args=SEND["args"], pass_number=1
    )
    denied = ApprovalRecord(request=asked, decision=ApprovalDecision(verdict=Verdict.DENY, by="ana", reason="no"))
    specs = {s.name: s for s in _tools([]).list()}
    gate = RefinementGate(specs, RefinementLedger(), approvals=[denied])
    plan = Plan(goal="g", steps=[PlanStep(step_id="s1", description="Send", tool="send", args=SEND["args"])])

    def add(args: dict[str, Any]) -> RefinementAction:
        new = PlanStep(step_id="s2", description="Send again", tool="send", args=args)
        return RefinementAction(action_type=RefinementActionType.ADD, justification="try again", new_step=new)

    same, other = gate.accept(plan, [add({"to": "ops", "body": "hi"})], None, pass_number=1).outcomes[0], None
    assert not same.applied and "a person denied" in same.reason and "ana: no" in same.reason
    other = gate.accept(plan, [add({"to": "ops", "body": "a shorter note"})], None, pass_number=1).outcomes[0]
    assert other.applied
