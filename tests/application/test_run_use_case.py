"""The run use case every front door calls: the one rule picks the port, the checks come before the run starts, a
run that may need a decision nobody here can give goes on the record, and each door's port is called the same way."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from aeon.application.errors import InputError
from aeon.application.results import BudgetReport, RunResult, RunStatus
from aeon.application.runs import Checked, InProcessRuns, RunCommand, Runs, plan_of
from aeon.domain.budget import BudgetLimits, BudgetState
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.records import Counters
from aeon.domain.tools import ToolSpec

SRC = Path(__file__).resolve().parents[2] / "src" / "aeon"


def _result(run_id: str, request: str) -> RunResult:
    budget = BudgetReport.of(BudgetState(limits=BudgetLimits(ttl=1, max_llm_calls=1), ttl_remaining=1), cost=None)
    return RunResult(
        status=RunStatus.COMPLETED,
        correlation_id=run_id,
        request=request,
        plan=None,
        outputs={},
        budget=budget,
        counts=Counters(),
    )


class _Tools:
    def __init__(self, *, approval: bool) -> None:
        self._specs = [
            ToolSpec(name="pay", description="pay", input_schema={}, output_schema={}, requires_approval=approval)
        ]

    def list(self) -> list[ToolSpec]:
        return self._specs

    def get(self, name: str) -> ToolSpec | None:
        return next((s for s in self._specs if s.name == name), None)

    async def invoke(self, name: str, args: Any, *, time_left: float | None = None) -> Any:
        raise AssertionError("not called")


class _Door:
    """What a door gives the use case, recording the order of what happened."""

    def __init__(self, *, approval: bool = False, configured: bool = False, refuse: bool = False) -> None:
        self.happened: list[str] = []
        self.plans: list[Plan | None] = []
        self.refuse = refuse

        async def execute(run_id: str, request: str, plan: str | None, progress: Any, approver: Any) -> RunResult:
            self.happened.append(f"in-process {request} approver={approver is not None}")
            self.plans.append(plan_of(plan))
            return _result(run_id, request)

        self.runs = Runs(
            tools=_Tools(approval=approval),
            configured=configured,
            preflight=self.preflight,
            in_process=InProcessRuns(execute),
            durable=lambda: self,
            forced=lambda: self.happened.append("forced"),
            new_id=lambda: "run-1",
        )

    @contextlib.asynccontextmanager
    async def preflight(self, plan: Plan | None, durable: bool) -> AsyncIterator[Checked]:
        self.happened.append(f"checked durable={durable}")
        if self.refuse:
            raise InputError("the log cannot be written")
        yield Checked(note="a note")
        self.happened.append("closed")

    def start(self, run_id: str, request: str, **given: Any) -> RunResult:
        self.happened.append(f"durable {request} waits_here={not given['leave_when_waiting']}")
        return _result(run_id, request)


def test_a_run_checked_then_run_in_process_keeps_the_checks_open_and_carries_their_note() -> None:
    door = _Door()
    result = asyncio.run(door.runs.start(RunCommand("add 2 and 3")))
    assert door.happened == ["checked durable=False", "in-process add 2 and 3 approver=False", "closed"]
    assert result.correlation_id == "run-1" and result.warnings == ["a note"]


def test_a_durable_run_starts_on_the_durable_port_after_the_checks() -> None:
    door = _Door(configured=True)
    result = asyncio.run(door.runs.start(RunCommand("add 2 and 3")))
    assert door.happened == ["checked durable=True", "durable add 2 and 3 waits_here=False", "closed"]
    assert result.warnings == ["a note"]


def test_a_door_without_an_event_loop_closes_the_checks_before_a_durable_run_waits_in_its_thread() -> None:
    door = _Door(configured=True)
    result = door.runs.run(RunCommand("add 2 and 3"), run_async=asyncio.run)
    assert door.happened == ["checked durable=True", "closed", "durable add 2 and 3 waits_here=False"]
    assert result.warnings == ["a note"]


def test_a_run_that_may_need_a_decision_nobody_here_can_give_goes_on_the_record_and_says_so() -> None:
    door = _Door(approval=True)
    door.runs.run(RunCommand("pay the bill"), run_async=asyncio.run)
    assert door.happened[0] == "forced" and door.happened[-1].startswith("durable pay the bill")


def test_with_someone_here_to_ask_or_such_calls_denied_the_run_stays_in_process() -> None:
    asked = _Door(approval=True)
    asked.runs.run(RunCommand("pay the bill", approver=object()), run_async=asyncio.run)  # type: ignore[arg-type]
    assert asked.happened[1] == "in-process pay the bill approver=True"
    denied = _Door(approval=True)
    denied.runs.run(RunCommand("pay the bill", on_record=False), run_async=asyncio.run)
    assert denied.happened[1] == "in-process pay the bill approver=False"


def test_a_refusal_of_the_checks_starts_no_run_on_either_port() -> None:
    for configured in (False, True):
        door = _Door(configured=configured, refuse=True)
        with pytest.raises(InputError, match="cannot be written"):
            door.runs.run(RunCommand("add 2 and 3"), run_async=asyncio.run)
        assert door.happened == [f"checked durable={configured}"]


def test_a_run_said_not_durable_that_needs_the_record_is_refused_before_any_check() -> None:
    door = _Door(approval=True, configured=True)
    with pytest.raises(InputError, match="nobody can be asked here"):
        door.runs.run(RunCommand("pay the bill", durable=False), run_async=asyncio.run)
    assert door.happened == []


def test_the_plan_given_reaches_the_run_as_an_equal_copy() -> None:
    door = _Door()
    plan = Plan(goal="pay", steps=[PlanStep(step_id="s1", description="pay", tool="pay", args={"amount": 3})])
    asyncio.run(door.runs.start(RunCommand("pay", plan=plan)))
    assert door.plans == [plan] and door.plans[0] is not plan


def test_no_front_door_patches_a_provider_after_the_container_is_built() -> None:
    patched = [
        f"{path.relative_to(SRC)}:{n}"
        for path in SRC.rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\.override\(", line)
    ]
    assert patched == []
