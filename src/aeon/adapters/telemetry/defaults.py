"""The telemetry defaults, written once: the `otel:` settings section defaults to these, and so do the adapters."""

from __future__ import annotations

SERVICE_NAME = "aeon"
