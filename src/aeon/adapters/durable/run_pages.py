"""One run as `aeon ui` shows it: its record on the system database (result, or last checkpoint and the call it
waits on) and its JSONL records, redacted, read for the page that application/views/run_page makes of them. The log
reader and the settings a run was recorded with come from the caller (the log is another adapter's; settings are
the entrypoints')."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from aeon.adapters.durable.approval import waiting_on
from aeon.adapters.durable.catalog import summary_of
from aeon.adapters.durable.engine import DurableEngine
from aeon.adapters.durable.runs import DbosRuns
from aeon.adapters.durable.runtime import RunSpec
from aeon.application.redaction import Redactor
from aeon.application.results import RunResult
from aeon.application.views import run_page as page
from aeon.application.views.run_page import RunView
from aeon.domain.approval import Pending
from aeon.domain.audit_log import ReadRecord, as_plain, as_record
from aeon.domain.run_state import RunState


class Recorded(msgspec.Struct, frozen=True):
    """What a page needs of the settings a run was recorded with: its log, how many rotated files it keeps, and the
    convergence criteria (as JSON)."""

    log: Path | None
    keep: int
    criteria: Mapping[str, Any]


Records = Callable[[Path, str, int], list[ReadRecord]]  # (log, run id, files kept) -> the run's records in it
SettingsOf = Callable[[RunSpec], Recorded | None]  # None: the run's config cannot be loaded any more


class RunPages:
    """Reads runs for the pages: the record of each from the engine's client, the log of each through `records`."""

    def __init__(self, engine: DurableEngine, redactor: Redactor, records: Records, settings: SettingsOf) -> None:
        self._engine, self._redactor, self._records, self._settings = engine, redactor, records, settings

    def view(self, run_id: str) -> RunView | None:
        """Run `run_id` as its page shows it, all of it read now (None: no such run)."""
        found = DbosRuns(self._engine).recorded(run_id)
        if found is None:
            return None
        w, spec = found.workflow, found.spec
        summary = summary_of(self._engine, self._redactor, w, None, time.monotonic())
        settings = self._settings(spec) if spec is not None else None
        result = self._redactor.struct(found.result, RunResult) if found.result is not None else None
        history = msgspec.to_builtins(result.history) if result is not None and result.history is not None else None
        if found.checkpoint is not None:
            history = self._so_far(run_id, found.checkpoint, spec, settings)
        pending = self._redactor.struct(found.pending, Pending) if found.pending is not None else None
        given = spec.overrides.get("log.path") if spec is not None else None
        log, note = page.log_of(given, settings.log if settings is not None else None)
        records = self.records(run_id, log, settings.keep if settings else 5) if log is not None else []
        finished = w.status not in ("PENDING", "ENQUEUED")
        return page.run_view(
            summary, result=result, history=history, pending=pending, records=records, log=log, log_note=note,
            finished=finished,
        )  # fmt: skip

    def pending(self, run_id: str) -> Pending | None:
        """The call run `run_id` waits on, redacted, or None."""
        pending = waiting_on(self._engine.client, run_id)
        return self._redactor.struct(pending, Pending) if pending is not None else None

    def records(self, run_id: str, log: Path, keep: int) -> list[ReadRecord]:
        """The run's records in `log`, redacted again with the page's secrets (the log was redacted as written)."""
        return [self._redacted(r) for r in self._records(log, run_id, keep)]

    def _redacted(self, record: ReadRecord) -> ReadRecord:
        plain = as_plain(record)
        scrubbed = self._redactor.scrub(plain)
        return record if scrubbed == plain else as_record(scrubbed)

    def _so_far(self, run_id: str, last: RunState, spec: RunSpec | None, settings: Recorded | None) -> dict[str, Any]:
        """A history document of the passes an unfinished run has closed, from its last checkpoint."""
        state = self._redactor.struct(last, RunState)
        criteria = dict(settings.criteria) if settings is not None else {}
        return page.history_so_far(run_id, spec.request if spec else "", criteria, state.passes)
