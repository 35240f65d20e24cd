"""What `aeon serve` says in the Agent2Agent protocol, as plain values the door turns into the SDK's types: the agent
card (its skills are the registered tools), the task state of each run status, a progress event as a status message,
the answer as an artifact, a waiting approval as the question an input-required task asks, and the reply to it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec

from aeon.application.results import RunResult, RunStatus
from aeon.application.views.progress import progress_lines
from aeon.domain.approval import ApprovalRequest
from aeon.domain.progress import ProgressEvent
from aeon.domain.tools import ToolSpec

PROTOCOL_VERSIONS = ("1.0", "0.3")  # one endpoint answers both (the SDK's v0.3 compatibility)
MAX_SKILL_DESCRIPTION = 400
# what every message asks for: a run; the tools it may call are skills of their own
RUN_SKILL = {
    "id": "aeon.run",
    "name": "run a request",
    "description": "Plans the request, runs the plan's tool calls, checks the answer and replies with it.",
    "tags": ["aeon"],
}

# A2A task states (the protocol's names) by how a run ended: a run awaiting a person's approval asks for input; one a
# person denied a call of was not done by choice (rejected); one stopped (Ctrl-C, a cancel) was canceled.
TASK_STATES: dict[RunStatus, str] = {
    RunStatus.COMPLETED: "completed",
    RunStatus.UNVERIFIED: "completed",  # ran to its end; the answer says a tool step is LLM text (result warnings)
    RunStatus.AWAITING_APPROVAL: "input-required",
    RunStatus.INTERRUPTED: "canceled",
    RunStatus.DENIED: "rejected",
    RunStatus.FAILED: "failed",
    RunStatus.ERROR: "failed",
    RunStatus.TTL_EXPIRED: "failed",
    RunStatus.APPROVAL_EXPIRED: "failed",
}


def task_state(status: RunStatus) -> str:
    """The A2A task state of a run that ended with `status`."""
    return TASK_STATES[status]


def agent_card(*, name: str, description: str, url: str, version: str, tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The agent card (JSON, the protocol's field names): JSON-RPC at `url` (protocol 1.0 and 0.3), streaming, text
    in, text or JSON out, the skill of running a request and one per tool (its name, its description's first line,
    its effect as a tag)."""
    return {
        "name": name,
        "description": description,
        "version": version,
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": version} for version in PROTOCOL_VERSIONS
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [RUN_SKILL, *(skill(spec) for spec in tools)],
    }


def skill(spec: ToolSpec) -> dict[str, Any]:
    said = (spec.description.strip().splitlines() or [spec.name])[0]
    if len(said) > MAX_SKILL_DESCRIPTION:
        said = said[: MAX_SKILL_DESCRIPTION - 1] + "…"
    tags = ["tool", spec.effect.value if spec.effect is not None else "effect-undeclared"]
    if spec.requires_approval:
        tags.append("approval")
    return {"id": spec.name, "name": spec.name, "description": said, "tags": tags}


def progress_text(event: ProgressEvent) -> str | None:
    """What a working task's status message says for `event` (as `aeon run` shows it); None: nothing worth a line."""
    lines = [text for text, _ in progress_lines(event, verbose=False)]
    return "\n".join(lines) if lines else None


def answer_text(result: RunResult) -> str:
    """The run's answer as an artifact's text: text as it is, any other value as JSON."""
    answer = result.answer
    if isinstance(answer, str):
        return answer
    return json.dumps(msgspec.to_builtins(answer), ensure_ascii=False)


def ending_text(result: RunResult) -> str:
    """The final status message: what went wrong (its code and message), or how the run ended."""
    if result.pending_approval is not None and result.status is RunStatus.AWAITING_APPROVAL:
        return approval_question(result.pending_approval)
    if result.error is not None:
        return f"{result.error.code}: {result.error.message}"
    return f"the run ended {result.status}"


def approval_question(request: ApprovalRequest) -> str:
    """What an input-required task asks: the call that waits, and how to answer it."""
    args = json.dumps(msgspec.to_builtins(request.args), ensure_ascii=False)
    why = f" ({request.reason})" if request.reason else ""
    return (
        f"step {request.step_id} waits for approval to call {request.tool} {args}{why}. "
        "Reply 'approve', or 'deny: REASON'."
    )


def approval_reply(text: str) -> tuple[bool, str | None] | None:
    """A reply to the approval question: (approved, reason), or None when it is neither an approval nor a denial."""
    said = text.strip()
    word, _, rest = said.partition(":")
    word = word.strip().lower()
    if word in ("approve", "approved", "yes"):
        return True, None
    if word in ("deny", "denied", "no"):
        return False, rest.strip() or "denied"
    return None
