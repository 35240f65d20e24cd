"""The `otel:` section of the settings schema, and `open_tracer`: the run's TracerPort built from it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field, field_validator

from aeon.adapters.telemetry import build_tracer
from aeon.adapters.telemetry.defaults import SERVICE_NAME
from aeon.application.ports import TracerPort
from aeon.application.redaction import Redactor
from aeon.application.settings_section import Section


class OtelSettings(Section):
    """OpenTelemetry traces and the token-usage metric (needs the [otel] extra); off by default."""

    enabled: bool = False
    exporter: Literal["console", "otlp"] = "console"
    # OTLP over HTTP: the collector's base URL (…/v1/traces and …/v1/metrics are added); empty: the OTEL_* env vars
    endpoint: str | None = None
    service_name: str = SERVICE_NAME
    capture_content: bool = Field(False, description="put prompt and answer text on the chat spans")

    @field_validator("endpoint", mode="before")
    @classmethod
    def _blank_is_unset(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v


def open_tracer(otel: OtelSettings, redactor: Redactor) -> Iterator[TracerPort]:
    """No-op unless otel.enabled: then the OpenTelemetry adapter ([otel] extra); shut down (exported) at the end."""
    tracer = build_tracer(
        enabled=otel.enabled,
        exporter=otel.exporter,
        endpoint=otel.endpoint,
        service_name=otel.service_name,
        capture_content=otel.capture_content,
        redactor=redactor,
    )
    try:
        yield tracer
    finally:
        tracer.shutdown()
