"""The A2A route group of `aeon serve` (a2a_door.py): the agent card and JSON-RPC at /a2a, over the runs of the
server's --config; absent, with one line on stderr, when the a2a-sdk (the [serve] extra) is not installed."""

from __future__ import annotations

import importlib.util

from starlette.routing import BaseRoute

from aeon.application.runs.openapi_groups import a2a_operations
from aeon.entrypoints.failures import say
from aeon.entrypoints.serve.context import Served

operations = a2a_operations  # what the OpenAPI document shows of these routes


def routes(served: Served) -> list[BaseRoute]:
    if importlib.util.find_spec("a2a") is None:
        say("A2A is off: the a2a-sdk is not installed (pip install 'aeon[serve]')")
        return []
    from aeon.entrypoints.serve.a2a_door import config_routes

    return config_routes(lambda: served.config)
