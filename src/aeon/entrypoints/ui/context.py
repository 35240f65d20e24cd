"""What every handler and live feed of `aeon ui` shares: the runs index, the run reader, the decisions, the
templates, the form secret and the redaction every message shown passes through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jinja2 import Environment
from starlette.responses import HTMLResponse

from aeon.adapters.durable.catalog import RunIndex
from aeon.adapters.durable.run_pages import RunPages
from aeon.application.redaction import Redactor
from aeon.application.runs.decisions import Decisions
from aeon.application.views.catalog import STATUSES


@dataclass
class Ui:
    """What the handlers share: the runs index, the run reader, the decisions, the templates, the form secret and
    the redaction every message shown passes through."""

    index: RunIndex
    runs: RunPages
    decisions: Decisions
    env: Environment
    csrf: str
    redactor: Redactor

    def render(self, name: str, code: int = 200, **context: Any) -> HTMLResponse:
        for said in ("error", "message"):  # what went wrong may quote what was sent: redacted as every output
            if isinstance(context.get(said), str):
                context[said] = self.redactor.text(context[said])
        html = self.env.get_template(name).render(csrf=self.csrf, statuses=STATUSES, **context)
        return HTMLResponse(html, status_code=code, headers={"cache-control": "no-store"})
