"""What every route group of `aeon serve` shares (`Served`), and the one way an answer leaves: JSON, redacted."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.responses import Response

from aeon.adapters.durable.listing import RunHeads
from aeon.adapters.durable.runs import DbosRuns
from aeon.adapters.durable.runtime import Outcome
from aeon.adapters.web.bodies import redacted_json
from aeon.application.redaction import Redactor
from aeon.application.runs import RecordedRuns
from aeon.application.runs.queued import QueuedRuns
from aeon.application.runs.schedules import Schedules
from aeon.application.runs.serving import ServeSettings
from aeon.application.threads import Threads
from aeon.application.views.run_resource import RunEvents


@dataclass(frozen=True)
class Served:
    """What a route needs: the `serve:` settings, the queueing use case (`queued`), the durable runs on the record
    (`runs`: read, cancel), the decisions on them (`recorded`), the run heads (`heads`: listing), the redaction
    every answer passes through, the runs' audit records (`events`), the `ui` app (`aeon ui`'s pages, mounted at
    /ui; None: not mounted), and the `threads` and `schedules` use cases."""

    serve: ServeSettings
    queued: QueuedRuns
    runs: DbosRuns
    recorded: RecordedRuns[Outcome]
    heads: RunHeads
    redactor: Redactor
    events: RunEvents
    ui: Any = None
    threads: Threads | None = None
    schedules: Schedules | None = None
    config: Path | None = None  # the --config file: the A2A and AG-UI doors run its runs in this process

    def json(self, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        """`body` as JSON, redacted as every output of Aeon is."""
        return redacted_json(self.redactor, body, status, headers)
