"""A recording OpenAI-compatible fake server for bench/tokens.py: it keeps every request body and answers Aeon,
LangGraph's plan-and-execute and a pydantic-ai agent correctly for the request in hand, telling them apart by the
shape of what they send (an Aeon prompt asks for a JSON schema of Aeon's; LangGraph's planner and replanner ask for
`Plan` and `Act`, its executor agent opens with the tutorial's "For the following plan:"; a pydantic-ai agent sends
the request itself with the tools).
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))
from fake_provider import json_server


@dataclass(frozen=True)
class Step:
    """One step of the plan a model would make: a tool call (`tool`, `args`) or reasoning; `output` is the tool's
    result or the reasoning's answer."""

    description: str
    output: str
    tool: str | None = None
    args: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    """A request, the plan that answers it and the final answer."""

    request: str
    steps: tuple[Step, ...]
    answer: str

    @property
    def tool_steps(self) -> list[Step]:
        return [s for s in self.steps if s.tool]


@dataclass
class Exchange:
    """One request as it arrived, who sent it (`framework`, `kind`) and the message answered."""

    framework: str
    kind: str
    body: dict[str, Any]
    reply: dict[str, Any]


_PROFILE = {
    "reasoning_depth": 1,
    "information_sufficiency": 1.0,
    "expected_tool_usage": "minimal",
    "output_breadth": "narrow",
    "confidence_requirement": "low",
    "raw_inference": "Everything needed is in the request.",
}
_CONVERGED = {
    "issues": [],
    "completeness_score": 1.0,
    "coherence_score": 1.0,
    "consistent": True,
    "explanation": "The steps answer the request.",
}
EXECUTOR_OPENING = "For the following plan:"  # the tutorial's executor task (langgraph's plan-and-execute)


def _schema(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    spec = (body.get("response_format") or {}).get("json_schema") or {}
    return str(spec.get("name", "")), spec.get("schema") or {}


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def identify(body: dict[str, Any]) -> tuple[str, str]:
    """(framework, kind) of a chat-completions request body, from its shape alone."""
    name, schema = _schema(body)
    messages = body.get("messages") or []
    if name in ("Plan", "Act"):
        return "langgraph", "planner" if name == "Plan" else "replanner"
    props = set((schema.get("properties") or {}).keys())
    for kind, marker in (
        ("profile_and_plan", "profile"),
        ("evaluation", "completeness_score"),
        ("step", "clarity_state"),
        ("plan", "steps"),
        ("profile", "reasoning_depth"),
    ):
        if marker in props:  # one of Aeon's answer schemas
            return "aeon", kind
    if body.get("tools"):
        users = [_text(m) for m in messages if m.get("role") == "user"]
        if users and users[0].startswith(EXECUTOR_OPENING):
            return "langgraph", "executor"
        return "pydantic-ai", "agent"
    return "unknown", name or "free text"


class Answers:
    """The right answer to each kind of request for one scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self.s = scenario

    def aeon_plan(self) -> dict[str, Any]:
        steps: list[dict[str, Any]] = []
        for i, step in enumerate(self.s.steps, 1):
            kind: dict[str, Any] = {"tool": step.tool, "args": step.args} if step.tool else {"agent": "llm"}
            steps.append({"step_id": f"s{i}", "description": step.description, **kind})
        return {"goal": self.s.request, "steps": steps}

    def aeon(self, kind: str, body: dict[str, Any]) -> str:
        if kind == "profile_and_plan":
            return json.dumps({"profile": _PROFILE, "plan": self.aeon_plan()})
        if kind == "plan":
            return json.dumps(self.aeon_plan())
        if kind == "profile":
            return json.dumps(_PROFILE)
        if kind == "step":  # the step asked about is named last ("Step: ..."), after the examples and the plan
            step = self._step_named(_text(body["messages"][-1]).rsplit("Step:", 1)[-1], reasoning=True)
            return json.dumps({"answer": step.output, "clarity_state": "CLEAR", "handoff_to_next": step.output})
        return json.dumps(_CONVERGED)

    def _step_named(self, text: str, *, reasoning: bool = False) -> Step:
        candidates = [s for s in self.s.steps if not (reasoning and s.tool)]
        return next((s for s in candidates if s.description in text), candidates[0])

    def planner(self) -> dict[str, Any]:
        return {"steps": [s.description for s in self.s.steps]}

    def replanner(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = "\n".join(_text(m) for m in body["messages"])
        done_part = prompt.split("You have currently done the follow steps:", 1)[-1]
        left = [s.description for s in self.s.steps if repr(s.description) not in done_part]
        return {"action": {"steps": left}} if left else {"action": {"response": self.s.answer}}

    def executor(self, body: dict[str, Any]) -> dict[str, Any]:
        task = _text(next(m for m in body["messages"] if m.get("role") == "user"))
        match = re.search(r"You are tasked with executing step \d+, (.*)\.$", task, re.S)
        step = self._step_named(match.group(1) if match else task)
        called = any(m.get("role") == "tool" for m in body["messages"])
        if step.tool and not called:
            return tool_call(str(step.tool), step.args, "call_0")
        return {"role": "assistant", "content": step.output}

    def agent(self, body: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in body["messages"] if m.get("role") == "tool")
        tools = self.s.tool_steps
        if done < len(tools):
            return tool_call(str(tools[done].tool), tools[done].args, f"call_{done}")
        return {"role": "assistant", "content": self.s.answer}


def tool_call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """An assistant message calling one function."""
    function = {"name": name, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def reply_to(body: dict[str, Any], answers: Answers) -> tuple[str, str, dict[str, Any]]:
    """(framework, kind, the assistant message) for one request body."""
    framework, kind = identify(body)
    message: dict[str, Any]
    if framework == "aeon":
        message = {"role": "assistant", "content": answers.aeon(kind, body)}
    elif framework == "langgraph" and kind in ("planner", "replanner"):
        content = answers.planner() if kind == "planner" else answers.replanner(body)
        message = {"role": "assistant", "content": json.dumps(content)}  # langchain-openai's json_schema method
    elif framework == "langgraph":
        message = answers.executor(body)
    elif framework == "pydantic-ai":
        message = answers.agent(body)
    else:
        raise ValueError(f"a request of unknown shape ({kind}): {json.dumps(body)[:300]}")
    return framework, kind, message


def completion(message: dict[str, Any], model: str) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class RecordingServer:
    """The exchanges since the last `take()`; `scenario` is the request being run."""

    def __init__(self) -> None:
        self.scenario: Scenario | None = None
        self.url = ""
        self._exchanges: list[Exchange] = []
        self._lock = threading.Lock()

    def take(self) -> list[Exchange]:
        with self._lock:
            taken, self._exchanges = self._exchanges, []
        return taken

    def handle(self, body: dict[str, Any]) -> dict[str, Any]:
        assert self.scenario is not None, "no scenario set"
        framework, kind, message = reply_to(body, Answers(self.scenario))
        with self._lock:
            self._exchanges.append(Exchange(framework, kind, body, message))
        return completion(message, str(body.get("model", "fake")))


@contextmanager
def serving() -> Iterator[RecordingServer]:
    """A RecordingServer on a free loopback port (`.url` ends in /v1), stopped on exit."""
    recorder = RecordingServer()

    def answer(path: str, body: bytes) -> tuple[int, bytes]:
        try:
            return 200, json.dumps(recorder.handle(json.loads(body))).encode()
        except Exception as exc:  # the bench reports it; the client sees a 400 and fails the run
            return 400, json.dumps({"error": {"message": str(exc), "type": "bench"}}).encode()

    with json_server(answer) as url:
        recorder.url = f"{url}/v1"
        yield recorder
