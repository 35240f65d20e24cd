"""One run as `aeon ui` shows it: its record on the system database (result, or last checkpoint and the call it
waits on) and its JSONL records, redacted, read for the page that application/views/run_page makes of them."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import msgspec

from aeon.adapters.durable.approval import waiting_on
from aeon.adapters.durable.catalog import summary_of
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.runs import DbosRuns
from aeon.adapters.durable.runtime import RunSpec
from aeon.adapters.eventlog.reader import LogIndex
from aeon.application.redaction import Redactor
from aeon.application.results import RunResult
from aeon.application.views import run_page as page
from aeon.application.views.run_page import RunView
from aeon.domain.approval import Pending
from aeon.domain.audit_log import ReadRecord, as_plain, as_record
from aeon.domain.errors import AeonError
from aeon.domain.run_state import RunState
from aeon.entrypoints.config.schema import Settings


class Runs:
    """Reads runs for the pages: the record of each from the engine's client, the log of each followed."""

    def __init__(self, engine: DurableEngine, redactor: Redactor) -> None:
        self._engine, self._redactor = engine, redactor
        self._logs: dict[Path, LogIndex] = {}
        self._settings: dict[str, Settings | None] = {}
        self._lock = threading.Lock()

    def view(self, run_id: str) -> RunView | None:
        """Run `run_id` as its page shows it, all of it read now (None: no such run)."""
        found = DbosRuns(self._engine).recorded(run_id)
        if found is None:
            return None
        w, spec = found.workflow, found.spec
        summary = summary_of(self._engine, self._redactor, w, None, time.monotonic())
        settings = self._settings_of(spec)
        result = self._redactor.struct(found.result, RunResult) if found.result is not None else None
        history = msgspec.to_builtins(result.history) if result is not None and result.history is not None else None
        if found.checkpoint is not None:
            history = self._so_far(run_id, found.checkpoint, spec, settings)
        pending = self._redactor.struct(found.pending, Pending) if found.pending is not None else None
        given = spec.overrides.get("log.path") if spec is not None else None
        log, note = page.log_of(given, settings.log.path if settings is not None else None)
        records = self.records(run_id, log, settings.log.keep if settings else 5) if log is not None else []
        finished = w.status not in ("PENDING", "ENQUEUED")
        return page.run_view(
            summary,
            result=result,
            history=history,
            pending=pending,
            records=records,
            log=log,
            log_note=note,
            finished=finished,
        )

    def pending(self, run_id: str) -> Pending | None:
        """The call run `run_id` waits on, redacted, or None."""
        pending = waiting_on(self._engine.client, run_id)
        return self._redactor.struct(pending, Pending) if pending is not None else None

    def records(self, run_id: str, log: Path, keep: int) -> list[ReadRecord]:
        """The run's records in `log`, redacted. Each log is indexed once and followed as it grows, so a page shown
        again reads only what is new and the run's own lines."""
        with self._lock:
            index = self._logs.setdefault(log, LogIndex(log, keep=keep))
        return [self._redacted(r) for r in index.records(run_id)]

    def _redacted(self, record: ReadRecord) -> ReadRecord:
        """The record with what the page's redactor holds secret blanked (the log was redacted as it was written)."""
        plain = as_plain(record)
        scrubbed = self._redactor.scrub(plain)
        return record if scrubbed == plain else as_record(scrubbed)

    def _so_far(self, run_id: str, last: RunState, spec: RunSpec | None, settings: Settings | None) -> dict[str, Any]:
        """A history document of the passes an unfinished run has closed, from its last checkpoint."""
        state = self._redactor.struct(last, RunState)
        criteria = settings.convergence.model_dump(mode="json") if settings is not None else {}
        return page.history_so_far(run_id, spec.request if spec else "", criteria, state.passes)

    def _settings_of(self, spec: RunSpec | None) -> Settings | None:
        """The settings the run was recorded with (its config file and overrides), or None when they cannot be
        loaded any more (the file moved): the page then shows what the record alone holds."""
        if spec is None:
            return None
        key = msgspec.json.encode([spec.config, spec.overrides]).decode()
        if key not in self._settings:
            from aeon.entrypoints.config.layers import load_settings

            try:
                self._settings[key] = load_settings(Path(spec.config) if spec.config else None, spec.overrides)
            except AeonError:
                self._settings[key] = None
        return self._settings[key]
