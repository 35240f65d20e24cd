"""The run use case on the record (RecordedRuns): the rules every door's resume, replay and decision share, each
then one call on the DurableRuns port — `aeon approve/deny/resume/replay`, `aeon mcp`'s resume and `aeon ui`."""

from __future__ import annotations

from typing import Any

import pytest

from aeon.application.errors import InputError
from aeon.application.runs import RecordedRuns, approval, denial
from aeon.domain.approval import ApprovalDecision, ApprovalRequest, Pending
from aeon.domain.budget import BudgetLimits, BudgetState
from aeon.domain.tools import ToolSpec


class _Tools:
    def __init__(self) -> None:
        schema = {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}
        self._spec = ToolSpec(
            name="publish", description="publish", input_schema=schema, output_schema={}, requires_approval=True
        )

    def list(self) -> list[ToolSpec]:
        return [self._spec]

    def get(self, name: str) -> ToolSpec | None:
        return self._spec if name == "publish" else None

    async def invoke(self, name: str, args: Any, *, time_left: float | None = None) -> Any:
        raise AssertionError("not called")


class _Port:
    """A record with one run waiting on `publish(to="team")`, remembering what it was sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, ApprovalDecision, bool]] = []
        self.forked: list[tuple[str, int, str | None]] = []

    def resume(self, run_id: str, *, rerun_unsafe: bool = False, given: Any = None, progress: Any = None) -> str:
        return f"resumed {run_id}"

    def fork(self, run_id: str, from_pass: int, *, config: Any = None, progress: Any = None, new_id: Any = None) -> str:
        self.forked.append((run_id, from_pass, new_id))
        return f"forked {run_id}"

    def answer(self, run_id: str, decision: ApprovalDecision, *, go_on: bool) -> str | None:
        self.sent.append((run_id, decision, go_on))
        return "went on" if go_on else None

    def pending(self, run_id: str) -> Pending:
        request = ApprovalRequest(
            run_id=run_id, key="k1", step_id="s1", description="d", tool="publish", args={"to": "team"}, pass_number=1
        )
        budget = BudgetState(limits=BudgetLimits(ttl=1, max_llm_calls=1), ttl_remaining=1)
        return Pending(request=request, plan=None, budget=budget)

    def tools(self, run_id: str) -> _Tools:
        return _Tools()


def test_edited_arguments_that_do_not_fit_the_tool_are_refused_and_nothing_is_sent() -> None:
    port = _Port()
    with pytest.raises(InputError, match=r"the edited arguments do not fit tool 'publish'.*nothing was sent"):
        RecordedRuns(port).answer("r1", approval("ann", {"to": 3}), go_on=True, edited="the edited arguments")
    assert port.sent == []
    assert RecordedRuns(port).problem("r1", {"to": 3}) is not None
    assert RecordedRuns(port).problem("r1", {"to": "all"}) is None


def test_arguments_shown_unchanged_approve_the_call_as_asked_and_edited_ones_are_sent() -> None:
    port = _Port()
    assert RecordedRuns(port).answer("r1", approval("ann", {"to": "team"}), go_on=True) == "went on"
    assert RecordedRuns(port).answer("r1", approval(" ", {"to": "all"}), go_on=False) is None
    (_, as_asked, _), (_, edited, go_on) = port.sent
    assert as_asked.approved and as_asked.args is None and as_asked.by == "ann"
    assert edited.args == {"to": "all"} and edited.by and not go_on  # blank `by`: this process's user


def test_a_denial_needs_a_reason() -> None:
    with pytest.raises(InputError, match=r"a denial needs a reason \(--reason TEXT\)"):
        denial("ann", "  ", hint=" (--reason TEXT)")
    assert denial("ann", " not today ").reason == "not today"


def test_a_fork_starts_from_pass_one_or_later_as_the_run_the_use_case_names() -> None:
    port = _Port()
    runs = RecordedRuns(port, new_id=lambda: "fork-1")
    with pytest.raises(InputError, match="--from-pass must be 1 or more, got 0"):
        runs.fork("r1", 0)
    assert runs.fork("r1", 2) == "forked r1" and port.forked == [("r1", 2, "fork-1")]
    assert runs.resume("r1") == "resumed r1"


def test_edited_arguments_as_json_are_checked_as_answering_with_them_would_check_them() -> None:
    runs = RecordedRuns(_Port())
    assert runs.check("r1", '{"to": "all"}') == []
    assert runs.check("r1", "[1]", "the edited arguments") == [
        "the edited arguments must be a JSON object (the tool's arguments by name)"
    ]
    (problem,) = runs.check("r1", '{"to": 3}')
    assert "'publish'" in problem and "to" in problem
