"""The TracerPort over the OpenTelemetry SDK ([otel] extra): spans and the gen_ai.client.token.usage histogram.

Imported only when `otel.enabled` is true. Aeon keeps its own TracerProvider and MeterProvider (the process's global
ones are left alone); `shutdown` (the CLI calls it after a run, or else at exit) flushes both. The console exporter
writes to stderr, so `--json` keeps stdout to itself. Every string attribute, and an exception escaping a span,
is redacted (the run's Redactor) before it reaches an exporter.
"""

from __future__ import annotations

import atexit
import sys
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from aeon.application import tracing
from aeon.application.ports import SpanPort, TracerPort
from aeon.application.redaction import NO_SECRETS, Redactor

SCOPE = "aeon"
# the bucket boundaries the GenAI semantic conventions give for gen_ai.client.token.usage
TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]


def _clean(attributes: Mapping[str, Any], redactor: Redactor) -> dict[str, Any]:
    """Attributes without unset ones, string values (prompts, answers, tool arguments and results) redacted."""
    return {k: redactor.data(v) for k, v in attributes.items() if v is not None}


class _Span:
    __slots__ = ("_redactor", "_span")

    def __init__(self, span: trace.Span, redactor: Redactor) -> None:
        self._span, self._redactor = span, redactor

    def set(self, attributes: Mapping[str, Any]) -> None:
        self._span.set_attributes(_clean(attributes, self._redactor))

    def fail(self, error_type: str) -> None:
        self._span.set_attribute("error.type", error_type)
        self._span.set_status(Status(StatusCode.ERROR, error_type))


class OtelTracer:
    """Spans through an OpenTelemetry TracerProvider; token counts into a histogram through a MeterProvider."""

    def __init__(
        self,
        *,
        span_processor: SpanProcessor,
        metric_reader: MetricReader,
        service_name: str = "aeon",
        capture_content: bool = False,
        redactor: Redactor = NO_SECRETS,
    ) -> None:
        self._redactor = redactor
        resource = Resource.create({"service.name": service_name})
        self._provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self._provider.add_span_processor(span_processor)
        self._meters = MeterProvider(resource=resource, metric_readers=[metric_reader], shutdown_on_exit=False)
        self._open = True
        atexit.register(self.shutdown)  # a program that never calls shutdown still exports what is pending
        self._tracer = self._provider.get_tracer(SCOPE)
        self._tokens = self._meters.get_meter(SCOPE).create_histogram(
            tracing.TOKEN_USAGE,
            unit="{token}",
            description="Measures number of input and output tokens used",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        )
        self.capture_content = capture_content

    @classmethod
    def with_exporter(
        cls,
        exporter: str,
        *,
        endpoint: str | None = None,
        service_name: str = "aeon",
        capture_content: bool = False,
        redactor: Redactor = NO_SECRETS,
    ) -> OtelTracer:
        """console: spans and metrics as JSON on stderr; otlp: OTLP over HTTP to `endpoint` (or OTEL_* variables)."""
        if exporter == "otlp":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            base = endpoint.rstrip("/") if endpoint else None
            spans: SpanExporter = OTLPSpanExporter(endpoint=f"{base}/v1/traces" if base else None)
            metrics: MetricExporter = OTLPMetricExporter(endpoint=f"{base}/v1/metrics" if base else None)
            processor: SpanProcessor = BatchSpanProcessor(spans)
        else:
            processor = SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr))
            metrics = ConsoleMetricExporter(out=sys.stderr)
        reader = PeriodicExportingMetricReader(metrics)
        return cls(
            span_processor=processor,
            metric_reader=reader,
            service_name=service_name,
            capture_content=capture_content,
            redactor=redactor,
        )

    def span(self, name: str, attributes: Mapping[str, Any]) -> AbstractContextManager[SpanPort]:
        return self._span(name, attributes)

    @contextmanager
    def _span(self, name: str, attributes: Mapping[str, Any]) -> Iterator[SpanPort]:
        kind = SpanKind.CLIENT if attributes.get(tracing.OPERATION) == "chat" else SpanKind.INTERNAL
        # The SDK would record an escaping exception's message as it is: it is recorded here, redacted, instead.
        with self._tracer.start_as_current_span(
            name,
            kind=kind,
            attributes=_clean(attributes, self._redactor),
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield _Span(span, self._redactor)
            except BaseException as exc:
                message = self._redactor.text(str(exc))
                span.add_event("exception", {"exception.type": type(exc).__name__, "exception.message": message})
                span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {message}"))
                raise

    def token_usage(self, tokens: int, attributes: Mapping[str, Any]) -> None:
        self._tokens.record(tokens, _clean(attributes, self._redactor))

    def shutdown(self) -> None:
        """Export what is pending and stop the exporters (once; later calls do nothing)."""
        if self._open:
            self._open = False
            self._provider.shutdown()
            self._meters.shutdown()


_PORT: type[TracerPort] = OtelTracer  # mypy checks the adapter against its port
