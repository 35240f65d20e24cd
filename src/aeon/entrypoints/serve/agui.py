"""The AG-UI route group of `aeon serve` (adapters/protocols/agui_routes.py): POST /agui over the runs of the
server's --config, GET /runs/{id}/agui for a run on the record; absent, with one line on stderr, without
ag-ui-protocol (the [serve] extra)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from starlette.routing import BaseRoute

from aeon.application.runs.openapi_groups import agui_operations
from aeon.entrypoints.failures import say
from aeon.entrypoints.serve.a2a import config_source
from aeon.entrypoints.serve.context import Served

operations = agui_operations  # what the OpenAPI document shows of these routes


def routes(served: Served) -> list[BaseRoute]:
    if importlib.util.find_spec("ag_ui") is None:
        say("AG-UI is off: ag-ui-protocol is not installed (pip install 'aeon[serve]')")
        return []
    from aeon.adapters.protocols.agui_routes import recorded_routes

    bounds = served.serve
    look = lambda run_id, after: served.events.look(run_id, after)  # noqa: E731  (read at a request: built bare)
    recorded = recorded_routes(look, most_seconds=bounds.max_stream_seconds, most_records=bounds.max_events)
    return [*config_routes(lambda: served.config), *recorded]


def config_routes(config: Callable[[], Path | None]) -> list[BaseRoute]:
    """The AG-UI route for the runs of the `config()` file (a2a.config_source: each in the input's thread)."""
    from aeon.adapters.protocols.agui_routes import agui_routes
    from aeon.application.runs.answers import answer

    return agui_routes(config_source(config), answer)
