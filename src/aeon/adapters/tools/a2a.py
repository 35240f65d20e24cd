"""A2ATools: remote Agent2Agent agents (config tools.a2a) as tools, one tool per agent: it sends the agent a message
with the official a2a-sdk client and answers with the agent's reply. Each call is bounded (its timeout and the run's
time cap, the bytes the agent may send), its errors redacted; what the agent says is untrusted data."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from aeon.adapters.tools.registry import DEFAULT_TIMEOUT
from aeon.application.errors import ToolNotFound
from aeon.application.redaction import Redactor
from aeon.application.schemas import schema_problems
from aeon.domain.provenance import Effect
from aeon.domain.tools import ToolResult, ToolSpec

# A reply bigger than this (every response of a call, the agent card too) is refused, not cut
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
MAX_ERROR_TEXT = 2000  # an error's text is cut past this
MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "description": "what to ask the agent, in words"}},
    "required": ["message"],
    "additionalProperties": False,
}


@dataclass(frozen=True, kw_only=True)
class A2AAgentConfig:
    """One entry of `tools.a2a`: the tool `name`, the agent's base `url` (its card at /.well-known/agent-card.json),
    what the planner is told it does, and `headers` sent with every request (credentials: never in the repr)."""

    name: str
    url: str = field(repr=False)  # may carry a password
    description: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float | None = None  # seconds per call; None: tools.timeout
    requires_approval: bool = False
    max_response_bytes: int = MAX_RESPONSE_BYTES


def agent_spec(agent: A2AAgentConfig) -> ToolSpec:
    """The tool an agent is: one `message` argument, its reply as output, an external effect, untrusted output."""
    said = agent.description or f"Ask the remote A2A agent {agent.name!r}: send it a message, get its reply as text."
    return ToolSpec(
        name=agent.name,
        description=said,
        input_schema=MESSAGE_SCHEMA,
        output_schema={},
        requires_approval=agent.requires_approval,
        effect=Effect.EXTERNAL,  # a message leaves this machine, the agent may act on it
        trusted_output=False,  # another agent's reply is data from outside; policy.tools may trust it
    )


class A2ATools:
    """Satisfies ToolPort (a ToolSource of CompositeTools). Never raises for an agent's fault: a call that fails,
    times out, sends too much or ends in a state other than completed is a ToolResult error naming the agent."""

    def __init__(
        self,
        agents: Sequence[A2AAgentConfig],
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        redactor: Redactor | None = None,
    ) -> None:
        self._agents = {a.name: a for a in agents}
        self._specs = {a.name: agent_spec(a) for a in agents}
        self._timeout = timeout
        self._redactor = redactor or Redactor([])

    def list(self) -> builtins.list[ToolSpec]:
        return builtins.list(self._specs.values())

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def is_idempotent(self, name: str) -> bool:
        return False  # a message sent twice is two messages

    def require_approval(self, name: str, needed: bool = True) -> None:
        spec = self._specs.get(name)
        if spec is None:
            raise ToolNotFound(f"unknown tool {name!r} (A2A agents: {', '.join(sorted(self._specs)) or 'none'})")
        self._specs[name] = msgspec.structs.replace(spec, requires_approval=needed)

    async def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float | None = None) -> ToolResult:
        """Send `args["message"]` to the agent and wait for its task to end, within min(its timeout, `time_left`).
        Raises ToolNotFound."""
        agent = self._agents.get(name)
        if agent is None:
            raise ToolNotFound(f"unknown tool {name!r} (A2A agents: {', '.join(sorted(self._agents)) or 'none'})")
        problems = schema_problems(dict(args), MESSAGE_SCHEMA)
        if problems:
            return ToolResult(error="ValidationError: " + "; ".join(f"{at}: {msg}" for at, msg in problems))
        limits = [t for t in (agent.timeout or self._timeout, time_left) if t is not None]
        limit = min(limits) if limits else None
        from aeon.adapters.tools.a2a_call import CappedTransport, ask  # httpx and the SDK, only when called

        transport = CappedTransport(agent.max_response_bytes)
        try:
            async with asyncio.timeout(limit):
                return await ask(name, agent.url, agent.headers, str(args["message"]), transport, limit)
        except TimeoutError:
            caller = time_left is not None and limit == time_left
            why = "the run's time cap" if caller else "its timeout"
            error = f"TimeoutError: A2A agent {name!r} did not answer within {limit:g} s ({why}); call cancelled"
            return ToolResult(error=error, cut_at_time_left=caller)
        except Exception as exc:  # the SDK's errors, httpx's, a card it cannot read
            if transport.exceeded:
                return ToolResult(error=f"A2A agent {name!r} sent more than {agent.max_response_bytes:,} bytes")
            return ToolResult(error=self._redactor.text(_clipped(f"A2A agent {name!r} failed: {_said(exc)}")))


def _said(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _clipped(text: str) -> str:
    return text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 1] + "…"
