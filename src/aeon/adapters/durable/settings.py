"""The `durable:` section of the settings schema (runs on DBOS, adapters/durable/)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from aeon.application.settings_section import Section


class DurableSettings(Section):
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
