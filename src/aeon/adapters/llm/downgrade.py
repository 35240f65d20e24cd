"""Graceful downgrade: a 400 that names a parameter, value or schema keyword the model does not take is retried once
without it, and the change is kept for the rest of the run, so the next model rule change does not break users."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import msgspec

from aeon.adapters.llm.dialects import Dialect, Structured
from aeon.adapters.llm.wire_schemas import schema_keywords
from aeon.application.errors import LLMRejected
from aeon.application.ports import LoggerPort
from aeon.domain.log_llm import LLMDowngradeRecord

T = TypeVar("T")

# Statuses of a request the provider understood and refused for its content; 401/403/404/413 are not about this.
_DOWNGRADABLE_STATUS = frozenset({400, 422})
_REFUSAL_WORDS = re.compile(
    r"not supported|unsupported|not permitted|not allowed|extra inputs|invalid|deprecated|does not support|"
    r"may not|cannot be used|unknown|unrecognized|not available|only the default",
    re.IGNORECASE,
)
_SCHEMA_KEYWORDS = (
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "prefixItems",
    "const",
)
# Structured-output mechanisms, each with the next weaker one to fall back to.
_WEAKER: dict[Structured, Structured] = {
    "strict_json_schema": "json_schema",
    "json_schema": "json_object",
    "json_object": "none",
    "output_config": "forced_tool",
    "forced_tool": "none",
}
_STRUCTURED_PARAMS = ("response_format", "output_config", "tool_choice", "tools")
_DROPPABLE = (
    "temperature",
    "top_p",
    "top_k",
    "stop",
    "stop_sequences",
    "reasoning_effort",
    "thinking",
    "cache_control",
)
_TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
MAX_DOWNGRADES = 4  # per call; every downgrade removes something new, so this only bounds a pathological provider


class Adjustments(msgspec.Struct, kw_only=True):
    """What the provider refused so far in this run. Mutated only by `apply`."""

    token_param: str | None = None
    dropped: set[str] = msgspec.field(default_factory=set)
    removed_keywords: set[str] = msgspec.field(default_factory=set)
    structured: Structured | None = None

    def mechanism(self, dialect: Dialect) -> Structured:
        return self.structured or dialect.structured


def _mentions(text: str, names: tuple[str, ...]) -> list[tuple[int, str]]:
    found = []
    for name in names:
        m = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text)
        if m:
            found.append((m.start(), name))
    return sorted(found)


def _nested(body: Mapping[str, Any]) -> set[str]:
    """Parameters sent inside another one: Anthropic's `cache_control` on the system block."""
    system = body.get("system")
    blocks = system if isinstance(system, list) else []
    return {"cache_control"} if any(isinstance(b, dict) and "cache_control" in b for b in blocks) else set()


def plan(exc: LLMRejected, body: Mapping[str, Any], adjust: Adjustments, dialect: Dialect) -> tuple[str, str] | None:
    """(what to change, the parameter/keyword it is about) for a refusal we can work around; None otherwise."""
    message = exc.provider_message or ""
    if exc.status not in _DOWNGRADABLE_STATUS or not _REFUSAL_WORDS.search(message):
        return None
    for name in _nested(body):  # named by its path ("system.0.cache_control: Extra inputs are not permitted")
        if re.search(rf"(?<![\w]){name}(?![\w])", message):
            return "drop", name
    sent = set(body)
    schema_sent = {k for key in ("response_format", "output_config", "tools") for k in schema_keywords(body.get(key))}
    for _, keyword in _mentions(message, _SCHEMA_KEYWORDS):
        if keyword in schema_sent and keyword not in adjust.removed_keywords:
            return "keyword", keyword
    param = exc.provider_param if exc.provider_param in sent else None
    candidates = [param] if param else []
    for group in (_STRUCTURED_PARAMS, _DROPPABLE, _TOKEN_PARAMS):
        candidates += [name for _, name in _mentions(message, group) if name in sent]
    for name in candidates:
        if name in _TOKEN_PARAMS:
            return "token_param", name
        if name in _DROPPABLE:
            return "drop", name
        if name in _STRUCTURED_PARAMS:
            return "structured", name
    if "schema" in message.lower() and adjust.mechanism(dialect) in ("strict_json_schema", "output_config"):
        return "structured", "response_format" if dialect.wire == "openai" else "output_config"
    return None


def apply(change: tuple[str, str], adjust: Adjustments, dialect: Dialect) -> str:
    """Record `change` in `adjust`; returns what is sent from now on, for the warning."""
    kind, name = change
    if kind == "keyword":
        adjust.removed_keywords.add(name)
        return f"schemas are sent without {name!r}"
    if kind == "token_param":
        adjust.token_param = "max_tokens" if name == "max_completion_tokens" else "max_completion_tokens"
        return f"the token limit is sent as {adjust.token_param!r}"
    if kind == "drop":
        adjust.dropped.update({name, "stop", "stop_sequences"} if name in ("stop", "stop_sequences") else {name})
        return f"{name!r} is no longer sent"
    current = adjust.mechanism(dialect)
    weaker = _WEAKER.get(current, "none")
    if dialect.thinking and weaker == "forced_tool":
        weaker = "none"  # a forced tool is refused while the model thinks
    adjust.structured = weaker
    return f"structured output falls back from {current} to {weaker}"


async def send(
    build: Callable[[], dict[str, Any]],
    post: Callable[[dict[str, Any]], Awaitable[T]],
    adjust: Adjustments,
    dialect: Dialect,
    logger: LoggerPort | None,
) -> tuple[T, list[str]]:
    """POST what `build` makes; on a refusal `plan` can work around, adjust and send again. Returns the answer and
    one warning per downgrade. Raises the last LLMRejected when no (further) downgrade applies."""
    warnings: list[str] = []
    for _ in range(MAX_DOWNGRADES + 1):
        body = build()
        try:
            return await post(body), warnings
        except LLMRejected as exc:
            change = plan(exc, body, adjust, dialect) if len(warnings) < MAX_DOWNGRADES else None
            if change is None:
                raise
            now = apply(change, adjust, dialect)
            warning = f"provider refused {change[1]!r} (HTTP {exc.status}: {exc.provider_message}); {now} this run"
            warnings.append(warning)
            if logger is not None:
                logger.emit(
                    LLMDowngradeRecord(
                        dialect=dialect.name,
                        refused=change[1],
                        change=now,
                        provider_message=exc.provider_message,
                        status=exc.status,
                    )
                )
    raise AssertionError("unreachable")  # the loop returns or raises
