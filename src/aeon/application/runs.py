"""The run use case every front door shares: the one rule for durable-or-not, the check an edited tool call gets
before it is sent, and the DurableRuns port without a record (InProcessRuns: `--no-durable`, tests)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aeon.application.errors import InputError
from aeon.application.ports import ApproverPort, ProgressPort, ToolPort
from aeon.application.results import RunResult
from aeon.domain.approval import ApprovalDecision


def schema_problem(tools: ToolPort, tool: str, args: dict[str, Any]) -> str | None:
    """Why `args` do not fit `tool`'s input schema, or None: the argument check every step's call gets (the kernel
    checks an edited call with it again)."""
    from aeon.application.plans.validation import args_problems

    spec = tools.get(tool)
    if spec is None:
        return f"tool {tool!r} is not registered"
    return "; ".join(args_problems(spec, args)) or None


NEEDS_RECORD = (
    "a tool call in this run may need approval and nobody can be asked here: only a durable run can wait on the "
    "record for aeon approve / aeon deny"
)


def durable_wanted(said: bool | None, *, configured: bool, needs_record: bool) -> bool:
    """The one rule every front door follows for "durable or not": what the caller said (`--durable/--no-durable`,
    `durable=` of the Python API and of `aeon mcp`'s run), else the config's `durable.enabled`. A run that may need a
    decision nobody here can give (`needs_record`) is durable unless the caller said it must not be: that is refused
    (InputError, exit 2) before anything starts, never overridden."""
    if said is not None:
        if not said and needs_record:
            raise InputError(f"{NEEDS_RECORD}; it was asked not to be durable (drop --no-durable / durable: false)")
        return said
    return configured or needs_record


# (run id, request, plan document, progress, approver) -> the run's result
Execute = Callable[[str, str, str | None, ProgressPort | None, ApproverPort | None], RunResult]


class InProcessRuns:
    """The DurableRuns port without a record (`--no-durable`, tests): a run executes in this process only, and what
    it did is known to this process while it lives; nothing can be resumed, forked or answered from elsewhere."""

    def __init__(self, execute: Execute) -> None:
        self._execute = execute
        self._done: dict[str, RunResult] = {}

    def start(
        self,
        run_id: str,
        request: str,
        *,
        plan: str | None = None,
        config: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        progress: ProgressPort | None = None,
        approver: ApproverPort | None = None,
        leave_when_waiting: bool = False,
    ) -> RunResult:
        result = self._execute(run_id, request, plan, progress, approver)
        self._done[run_id] = result
        return result

    def resume(self, run_id: str, *, rerun_unsafe: bool = False) -> RunResult:
        raise InputError(f"run {run_id} was not durable: nothing recorded it to go on with (run it again)")

    def fork(
        self, run_id: str, from_pass: int, *, config: str | None = None, progress: ProgressPort | None = None
    ) -> RunResult:
        raise InputError(f"run {run_id} was not durable: it recorded no pass to replay from")

    def answer(self, run_id: str, decision: ApprovalDecision, *, go_on: bool) -> RunResult | None:
        raise InputError(f"run {run_id} is not waiting for approval (a run that is not durable waits on nobody)")

    def list(self, limit: int = 100) -> Sequence[RunResult]:
        return list(reversed(self._done.values()))[:limit]

    def outcome(self, run_id: str) -> RunResult | None:
        return self._done.get(run_id)
