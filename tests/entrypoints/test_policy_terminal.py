"""On a terminal, a call the capability policy asks about says why and which outputs it came from."""

from __future__ import annotations

import asyncio
import io

from aeon.adapters.tools import ToolRegistry, register_builtins
from aeon.application.kernel.run import RunSettings
from aeon.application.redaction import NO_SECRETS
from aeon.domain.approval import ApprovalRequest
from aeon.domain.budget import BudgetState
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
