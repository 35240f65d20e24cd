"""Tracing: the GenAI semantic-convention names, the no-op tracer (the default) and the tool-span attributes.

Names and attributes follow the OpenTelemetry GenAI semantic conventions (`invoke_agent aeon`, `chat {model}`,
`execute_tool {tool}`, `gen_ai.*` attributes, the `gen_ai.client.token.usage` histogram). The TracerPort is in
ports.py; the OpenTelemetry adapter (adapters/telemetry) makes real spans. Tracing is off by default: the no-op
tracer below costs a method call per span and nothing else, and the kernel never imports opentelemetry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from aeon.application.ports import SpanPort, TracerPort
from aeon.domain.plan import PlanStep

# GenAI semantic convention names used by the kernel
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHED_TOKENS = "gen_ai.usage.cache_read.input_tokens"
TOKEN_TYPE = "gen_ai.token.type"
TOKEN_USAGE = "gen_ai.client.token.usage"


class _NullSpan:
    def set(self, attributes: Mapping[str, Any]) -> None:
        return None

    def fail(self, error_type: str) -> None:
        return None


_NULL_SPAN = _NullSpan()


class NullTracer:
    """Tracing off: no span is made, nothing is recorded."""

    capture_content = False

    def span(self, name: str, attributes: Mapping[str, Any]) -> AbstractContextManager[SpanPort]:
        return _NULL_CM

    def token_usage(self, tokens: int, attributes: Mapping[str, Any]) -> None:
        return None

    def shutdown(self) -> None:
        return None


class _NullContext:
    """A reusable context manager yielding the no-op span (no generator made per span)."""

    def __enter__(self) -> SpanPort:
        return _NULL_SPAN

    def __exit__(self, *exc: object) -> None:
        return None


_NULL_CM = _NullContext()
NULL_TRACER = NullTracer()


def tool_attributes(tracer: TracerPort, step: PlanStep) -> dict[str, Any]:
    """The attributes of an `execute_tool {tool}` span; the arguments only when content capture is on."""
    attrs: dict[str, Any] = {
        OPERATION: "execute_tool",
        "gen_ai.tool.name": step.tool,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": step.step_id,
    }
    if tracer.capture_content:
        attrs["gen_ai.tool.call.arguments"] = json.dumps(step.args, default=str)
    return attrs


def tool_outcome(tracer: TracerPort, span: SpanPort, output: Any, error: str | None) -> None:
    if error is not None:
        span.fail("tool_error")
    if tracer.capture_content:
        span.set({"gen_ai.tool.call.result": json.dumps(output, default=str) if error is None else error})
