"""The AG-UI route group of `aeon serve` (agui_door.py): POST /agui over the runs of the server's --config; absent,
with one line on stderr, when ag-ui-protocol (the [serve] extra) is not installed."""

from __future__ import annotations

import importlib.util

from starlette.routing import BaseRoute

from aeon.entrypoints.failures import say
from aeon.entrypoints.serve.context import Served


def routes(served: Served) -> list[BaseRoute]:
    if importlib.util.find_spec("ag_ui") is None:
        say("AG-UI is off: ag-ui-protocol is not installed (pip install 'aeon[serve]')")
        return []
    from aeon.entrypoints.serve.agui_door import config_routes

    return config_routes(served.config)
