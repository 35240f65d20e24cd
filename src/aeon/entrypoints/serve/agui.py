"""The AG-UI route group of `aeon serve` (agui_door.py): POST /agui over the runs of the server's --config, GET
/runs/{id}/agui for a run on the record; absent, with one line on stderr, without ag-ui-protocol (the [serve] extra)."""

from __future__ import annotations

import importlib.util

from starlette.routing import BaseRoute

from aeon.application.runs.openapi_groups import agui_operations
from aeon.entrypoints.failures import say
from aeon.entrypoints.serve.context import Served

operations = agui_operations  # what the OpenAPI document shows of these routes


def routes(served: Served) -> list[BaseRoute]:
    if importlib.util.find_spec("ag_ui") is None:
        say("AG-UI is off: ag-ui-protocol is not installed (pip install 'aeon[serve]')")
        return []
    from aeon.entrypoints.serve.agui_door import config_routes, recorded_routes

    bounds = served.serve
    look = lambda run_id, after: served.events.look(run_id, after)  # noqa: E731  (read at a request: built bare)
    recorded = recorded_routes(look, most_seconds=bounds.max_stream_seconds, most_records=bounds.max_events)
    return [*config_routes(lambda: served.config), *recorded]
