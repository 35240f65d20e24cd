"""Values exchanged with a language model: messages, completions and token usage."""

from __future__ import annotations

import msgspec

# How the prompt of a JSON repair call opens (its guide's heading, then its labelled slots): the application writes
# it (llm/prompts/templates.py), a scripted model's diagnostics recognise it (adapters/llm/expected.py).
JSON_REPAIR_OPENINGS = ("## Repair JSON\n", "Schema: ")


class Message(msgspec.Struct, frozen=True, kw_only=True):
    role: str  # "system" | "user" | "assistant"
    content: str


class Usage(msgspec.Struct, kw_only=True):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens served from the provider's prompt/KV cache


class Completion(msgspec.Struct, kw_only=True):
    text: str
    usage: Usage = msgspec.field(default_factory=Usage)
    request_id: str | None = None
    finish_reason: str | None = None
    model: str | None = None
    warnings: list[str] = msgspec.field(default_factory=list)  # what the adapter had to change to be accepted
