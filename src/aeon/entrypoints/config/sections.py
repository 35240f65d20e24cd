"""The plain sections of the settings schema: run, convergence, prices, otel, log, durable."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    field_validator,
)

from aeon.adapters.eventlog.jsonl import KEEP, MAX_RECORD_BYTES, MAX_STRING_BYTES, ROTATE_BYTES
from aeon.adapters.eventlog.shrink import MIN_CAP
from aeon.adapters.llm.settings import Section as _Section
from aeon.adapters.telemetry.defaults import SERVICE_NAME
from aeon.application.kernel.run import RunSettings
from aeon.application.plans.validation import MAX_PLAN_STEPS
from aeon.domain.evaluation import Severity

_RUN = RunSettings()  # the kernel's defaults: the one place they are written


class RunSection(_Section):
    """The `run:` section; its defaults are the kernel's own (RunSettings()), so a test's run is production's."""

    ttl: int = Field(_RUN.ttl, ge=0, description="passes of the multi-pass loop")
    max_llm_calls: int = Field(_RUN.max_llm_calls, ge=0)
    max_tokens: int | None = Field(_RUN.max_tokens, ge=1)
    max_seconds: float | None = Field(_RUN.max_seconds, gt=0)
    # USD for the whole run, priced from `prices`; each call's worst case is checked before it is sent
    max_cost: float | None = Field(_RUN.max_cost, gt=0)
    # what the model is asked to stay under; hand-written plans (--plan) are bound only by MAX_PLAN_STEPS
    max_plan_steps: int = Field(_RUN.max_plan_steps, ge=1, le=MAX_PLAN_STEPS)
    evaluate: bool = Field(_RUN.evaluate, description="False: one plan → execute pass without profile or evaluation")
    # true (what --ttl sets): with a given plan (--plan) no profiling call is made and the TTL is used as given
    ttl_given: bool = _RUN.ttl_given
    # seconds a tool call that needs approval waits for a person's decision; past it the run ends approval_expired
    approval_timeout: float = Field(_RUN.approval_timeout, gt=0)


class ConvergenceSettings(_Section):
    min_completeness: float = Field(_RUN.criteria.min_completeness, ge=0.0, le=1.0)
    min_coherence: float = Field(_RUN.criteria.min_coherence, ge=0.0, le=1.0)
    max_severity: Severity = _RUN.criteria.max_severity
    require_consistency: bool = _RUN.criteria.require_consistency


class PriceSettings(_Section):
    """USD per million tokens for one model; cached input tokens cost `input` when `cached_input` is not given."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)


class OtelSettings(_Section):
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


class LogSettings(_Section):
    path: Path | None = Path(".aeon/runs.jsonl")
    # Texts of 1 KiB or more are written once per log; a repeat is a marker naming the record that holds the copy.
    max_string_bytes: int = Field(MAX_STRING_BYTES, ge=MIN_CAP, description="a text's first copy is cut past this")
    max_record_bytes: int = Field(
        MAX_RECORD_BYTES, ge=MIN_CAP, description="a record's largest texts are cut past this"
    )
    rotate_bytes: int | None = Field(ROTATE_BYTES, ge=MIN_CAP, description="rotate past this; null: never")
    keep: int = Field(KEEP, ge=1, description="backups kept when rotating: runs.jsonl.1 (newest) … runs.jsonl.N")

    @field_validator("path", mode="before")
    @classmethod
    def _blank_is_off(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v


class DurableSettings(_Section):
    """Durable runs on DBOS: `enabled` (the default) makes `aeon run` durable (false, or --no-durable: not);
    `database_url` is the system database (empty: SQLite at .aeon/aeon.sqlite; a postgresql:// URL for workers on
    several hosts);
    `recover_after_seconds`: how long a batch or worker process may go unheard before a live one takes its runs;
    `defer_answers_under`: LLM answers that came within these seconds in all (a scripted model, a cache) are written
    with the run's next written step rather than one by one (0: every answer at once)."""

    enabled: bool = True
    database_url: str | None = None
    recover_after_seconds: float = Field(default=60.0, gt=0)
    defer_answers_under: float = Field(default=0.02, ge=0)

    @field_validator("database_url", mode="before")
    @classmethod
    def _blank_is_default(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v
