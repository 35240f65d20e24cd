"""TaskProfile inference (phase A): one schema-constrained LLM call, checked and repaired by the supervisor."""

from __future__ import annotations

from typing import Any

import msgspec

from aeon.application.errors import missing_field
from aeon.application.llm.supervisor import Supervisor
from aeon.domain.profile import Breadth, Confidence, TaskProfile, ToolUsage, stabilize

PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning_depth": {"type": "integer", "minimum": 1, "maximum": 5},
        "information_sufficiency": {"type": "number", "minimum": 0, "maximum": 1},
        "expected_tool_usage": {"type": "string", "enum": [e.value for e in ToolUsage]},
        "output_breadth": {"type": "string", "enum": [e.value for e in Breadth]},
        "confidence_requirement": {"type": "string", "enum": [e.value for e in Confidence]},
        # a few words: no later step needs more, and on a grammar-constrained server each character is generated
        "raw_inference": {"type": "string", "minLength": 1, "maxLength": 80},
    },
    "required": [
        "reasoning_depth",
        "information_sufficiency",
        "expected_tool_usage",
        "output_breadth",
        "confidence_requirement",
        "raw_inference",
    ],
}


def profile_problems(obj: Any) -> list[str]:
    """Schema and range problems of a profile answer; empty when it is a complete TaskProfile."""
    if not isinstance(obj, dict):
        return ["profile must be a JSON object"]
    missing = [k for k in PROFILE_SCHEMA["required"] if k not in obj]
    if missing:
        return [missing_field(f"'{k}' is a required property") for k in missing]
    try:
        profile = build_profile(obj, version=1)
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        return [f"invalid profile: {exc}"]
    return profile.problems()


def build_profile(obj: dict[str, Any], *, version: int) -> TaskProfile:
    """A TaskProfile from an answer that `profile_problems` found complete."""
    data = {k: obj[k] for k in PROFILE_SCHEMA["required"]}
    return msgspec.convert({**data, "profile_version": version}, TaskProfile, strict=False)


def describe(profile: TaskProfile) -> str:
    """One line for prompts: every dimension, so no prompt sees a null profile."""
    return (
        f"depth {profile.reasoning_depth}/5, information {profile.information_sufficiency:.1f}, tools "
        f"{profile.expected_tool_usage.value}, breadth {profile.output_breadth.value}, confidence "
        f"{profile.confidence_requirement.value} ({profile.raw_inference})"
    )


def static_profile(reason: str, version: int = 1) -> TaskProfile:
    """The profile used when there is nothing for a profile to decide (`reason`): no LLM call, stated as such."""
    return TaskProfile(
        profile_version=version,
        reasoning_depth=1,
        information_sufficiency=1.0,
        expected_tool_usage=ToolUsage.MINIMAL,
        output_breadth=Breadth.NARROW,
        confidence_requirement=Confidence.LOW,
        raw_inference=f"not inferred: {reason}",
    )


class Profiler:
    def __init__(self, supervisor: Supervisor) -> None:
        self._supervisor = supervisor

    async def infer(
        self, request: str, *, version: int = 1, previous: TaskProfile | None = None, notes: str = ""
    ) -> tuple[TaskProfile, str | None]:
        """A profile for the request (re-inferred with `notes` at a pass boundary), tier-stabilised against
        `previous`; the second value is the clamp note, if any."""
        obj = await self._supervisor.ask_json(
            "profile",
            self._supervisor.prompts.profile_again,
            {"request": request, "notes": notes or "nothing yet"},
            schema=PROFILE_SCHEMA,
            target="task_profile",
            validate=profile_problems,
        )
        return stabilize(build_profile(obj, version=version), previous)
