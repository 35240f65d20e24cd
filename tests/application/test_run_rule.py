"""One rule for "durable or not", the same at every front door: what the caller said, else the config; a run that
may need a decision nobody here can give is durable unless the caller said no, which is refused, never overridden."""

from __future__ import annotations

from typing import Any

import pytest

from aeon.application.errors import InputError
from aeon.application.runs import durable_wanted


@pytest.mark.parametrize("configured", [True, False])
def test_what_the_caller_said_decides_whatever_the_config_says(configured: bool) -> None:
    assert durable_wanted(True, configured=configured, needs_record=False) is True
    assert durable_wanted(False, configured=configured, needs_record=False) is False


def test_unsaid_the_config_decides_and_a_decision_nobody_here_can_give_makes_it_durable() -> None:
    assert durable_wanted(None, configured=True, needs_record=False) is True
    assert durable_wanted(None, configured=False, needs_record=False) is False
    assert durable_wanted(None, configured=False, needs_record=True) is True


def test_a_run_said_not_durable_that_may_need_a_decision_nobody_here_can_give_is_refused_not_overridden() -> None:
    with pytest.raises(InputError, match="may need approval and nobody can be asked here"):
        durable_wanted(False, configured=True, needs_record=True)


def _result(run_id: str, request: str) -> Any:
    from aeon.application.results import BudgetReport, RunResult, RunStatus
    from aeon.domain.budget import BudgetLimits, BudgetState
    from aeon.domain.records import Counters

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


def test_a_run_without_a_record_is_known_to_its_process_and_cannot_be_resumed_forked_or_answered() -> None:
    from aeon.application.ports import DurableRuns
    from aeon.application.runs import InProcessRuns
    from aeon.domain.approval import ApprovalDecision, Verdict

    asked: list[tuple[str, str, str | None]] = []

    def execute(run_id: str, request: str, plan: str | None, progress: Any, approver: Any) -> Any:
        asked.append((run_id, request, plan))
        return _result(run_id, request)

    runs = InProcessRuns(execute)
    assert isinstance(runs, DurableRuns)
    done = runs.start("r1", "add 2 and 3")
    assert asked == [("r1", "add 2 and 3", None)] and done.correlation_id == "r1"
    assert runs.outcome("r1") is done and runs.outcome("r2") is None and list(runs.list()) == [done]
    with pytest.raises(InputError, match="not durable"):
        runs.resume("r1")
    with pytest.raises(InputError, match="not durable"):
        runs.fork("r1", 1)
    with pytest.raises(InputError, match="not waiting for approval"):
        runs.answer("r1", ApprovalDecision(verdict=Verdict.APPROVE, by="tester"), go_on=True)
