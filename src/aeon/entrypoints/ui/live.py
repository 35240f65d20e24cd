"""Live pages: a run in progress (or a batch) sent again as server-sent events whenever its records change, so the
open page follows it without reloading; the feed ends once nothing more can change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from aeon.adapters.web.sse import followed
from aeon.application.views.feed import Seen, batch_seen, run_seen
from aeon.entrypoints.ui.context import Ui

EVERY = 0.5  # seconds between looks at a run's log and record


def run_feed(ui: Ui) -> Callable[[Request], Any]:
    """`update` events carry the run's live part of the page (rendered as the page renders it), `status` its status
    when it changes, `end` that it ended."""

    async def feed(request: Request) -> Response:
        run_id = request.path_params["run_id"]

        def look() -> Seen | None:
            view = ui.runs.view(run_id)
            if view is None:
                return None
            return run_seen(view, ui.env.get_template("_live.html").render(view=view, csrf=ui.csrf))

        return followed(look, request.query_params.get("status", ""), EVERY)

    return feed


def batch_feed(ui: Ui) -> Callable[[Request], Any]:
    """`update` events carry the batch's progress and runs; `end` once none of its runs is queued or running."""

    async def feed(request: Request) -> Response:
        name = request.path_params["name"]

        def look() -> Seen | None:
            batch = ui.index.batch(name)
            if batch is None:
                return None
            return batch_seen(batch, ui.env.get_template("_batch.html").render(batch=batch, csrf=ui.csrf))

        return followed(look, "", EVERY * 2)

    return feed
