"""The prompt set of each prompt profile (domain/llm.py PromptProfile): which template every prompt kind uses, how
the tool list and the run's shared prefix are written, and what an answer's JSON schema looks like on its way out.

`base` is the completion-style, few-shot set (templates.py, evaluation.py, layout.py: unchanged, so the recorded
cassettes replay); `chat` and `tools` share the chat set (chat.py): no examples, the schema once (in the request),
compact tool lines, terse instructions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aeon.application.llm.prompts import PromptTemplate, chat, evaluation, layout, templates
from aeon.application.llm.prompts.tools import describe_tools, describe_tools_compact
from aeon.application.policy import Policy
from aeon.domain.llm import PromptProfile
from aeon.domain.tools import ToolSpec

# What a model that follows a schema natively does not need: words for a human reader of the schema, and string
# length floors (the supervisor's validators check every answer against the schema as written, bounds included)
_NOT_FOR_THE_MODEL = frozenset({"title", "description", "$comment", "examples", "default", "minLength"})


def as_written(schema: Mapping[str, Any]) -> dict[str, Any]:
    return dict(schema)


def compact(schema: Any) -> Any:
    """`schema` without what `_NOT_FOR_THE_MODEL` names, at any depth (a property named so is kept)."""
    if isinstance(schema, list):
        return [compact(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NOT_FOR_THE_MODEL:
            continue
        keep_names = key in ("properties", "$defs", "definitions") and isinstance(value, Mapping)
        out[key] = {k: compact(v) for k, v in value.items()} if keep_names else compact(value)
    return out


@dataclass(frozen=True, slots=True)
class PromptSet:
    """The templates of every prompt kind for one profile, with the run's shared prefix and the schema's form."""

    profile: PromptProfile
    preamble: PromptTemplate
    profile_and_plan: PromptTemplate
    plan: PromptTemplate
    evaluate: PromptTemplate
    profile_again: PromptTemplate
    reason: PromptTemplate
    refine: PromptTemplate
    repair_step: PromptTemplate
    repair_json: PromptTemplate
    tool_list: Callable[[Sequence[ToolSpec], Policy | None], str]
    schema_form: Callable[[Mapping[str, Any]], dict[str, Any]]  # an answer's schema as the model gets it
    # the evaluation shows a step output that is also the final answer once, as the answer, when it is longer than
    # this many characters
    shown_once: int

    @property
    def kinds(self) -> tuple[PromptTemplate, ...]:
        return (
            self.profile_and_plan,
            self.plan,
            self.evaluate,
            self.profile_again,
            self.reason,
            self.refine,
            self.repair_step,
            self.repair_json,
        )

    def shared_prefix(self, tools: Sequence[ToolSpec], policy: Policy | None = None, *, evaluate: bool) -> str:
        """The text every call of a run opens with: the preamble listing `tools`; for base models, then the guides of
        the kinds every pass asks for (prompts/layout.py; `evaluate`: the run's `run.evaluate`)."""
        listed = self.tool_list(tools, policy)
        if self.profile == "base":  # layout.py's own words, byte for byte
            return layout.shared_prefix(listed, evaluate=evaluate)
        return self.preamble.render({"tools": listed})


BASE = PromptSet(
    profile="base",
    preamble=templates.PREAMBLE,
    profile_and_plan=templates.PROFILE_AND_PLAN,
    plan=templates.PLAN,
    evaluate=evaluation.EVALUATE,
    profile_again=templates.PROFILE,
    reason=templates.REASON,
    refine=templates.REFINE,
    repair_step=templates.REPAIR_STEP,
    repair_json=templates.REPAIR_JSON,
    tool_list=describe_tools,
    schema_form=as_written,
    shown_once=300,
)
CHAT = PromptSet(
    profile="chat",
    preamble=chat.PREAMBLE,
    profile_and_plan=chat.PROFILE_AND_PLAN,
    plan=chat.PLAN,
    evaluate=chat.EVALUATE,
    profile_again=chat.PROFILE,
    reason=chat.REASON,
    refine=chat.REFINE,
    repair_step=chat.REPAIR_STEP,
    repair_json=chat.REPAIR_JSON,
    tool_list=describe_tools_compact,
    schema_form=compact,
    shown_once=0,
)
# `tools`: a chat model that also calls tools natively; its prompts are the chat set's (the answer's schema still
# goes as the request's structured output, or as the one forced tool of the anthropic-tool dialect)
_SETS: dict[PromptProfile, PromptSet] = {"base": BASE, "chat": CHAT, "tools": CHAT}


def prompt_set(profile: PromptProfile) -> PromptSet:
    return _SETS[profile]
