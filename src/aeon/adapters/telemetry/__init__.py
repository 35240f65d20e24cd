"""Telemetry adapters: the TracerPort over OpenTelemetry ([otel] extra), chosen by the `otel:` config section."""

from __future__ import annotations

from aeon.application.errors import ConfigurationError
from aeon.application.ports import TracerPort
from aeon.application.redaction import NO_SECRETS, Redactor
from aeon.application.tracing import NULL_TRACER, NullTracer

_TRACERS: tuple[type[TracerPort], ...] = (NullTracer,)  # and OtelTracer, checked in otel.py (imported lazily)


def build_tracer(
    *,
    enabled: bool,
    exporter: str = "console",
    endpoint: str | None = None,
    service_name: str = "aeon",
    capture_content: bool = False,
    redactor: Redactor = NO_SECRETS,
) -> TracerPort:
    """The no-op tracer when tracing is off (opentelemetry is then never imported), else the OpenTelemetry one."""
    if not enabled:
        return NULL_TRACER
    try:
        from aeon.adapters.telemetry.otel import OtelTracer
    except ImportError as exc:
        raise ConfigurationError(
            f'otel.enabled is true but OpenTelemetry is not installed ({exc.name}): pip install -e ".[otel]"'
        ) from None

    return OtelTracer.with_exporter(
        exporter, endpoint=endpoint, service_name=service_name, capture_content=capture_content, redactor=redactor
    )
