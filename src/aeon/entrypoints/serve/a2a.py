"""The A2A route group of `aeon serve` (adapters/protocols/a2a_routes.py): the agent card and JSON-RPC at /a2a, over
the runs of the server's --config; absent, with one line on stderr, when the a2a-sdk (the [serve] extra) is not
installed. `config_source` is also the AG-UI door's."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.routing import BaseRoute

from aeon.application.runs.openapi_groups import a2a_operations
from aeon.domain.tools import ToolSpec
from aeon.entrypoints.failures import say
from aeon.entrypoints.serve.context import Served

if TYPE_CHECKING:  # the a2a-sdk is the [serve] extra: imported when the routes are built
    from aeon.adapters.protocols.a2a_executor import Events, Source

operations = a2a_operations  # what the OpenAPI document shows of these routes


def routes(served: Served) -> list[BaseRoute]:
    if importlib.util.find_spec("a2a") is None:
        say("A2A is off: the a2a-sdk is not installed (pip install 'aeon[serve]')")
        return []
    return config_routes(lambda: served.config)


def config_routes(config: Callable[[], Path | None]) -> list[BaseRoute]:
    """The A2A routes for the runs of the `config()` file (read when a request needs it)."""
    from aeon.adapters.protocols.a2a_routes import a2a_routes
    from aeon.application.runs.answers import answer

    return a2a_routes(config_source(config), config_tools(config), answer)


def config_source(config: Callable[[], Path | None]) -> Source:
    """aeon.stream's runs of the `config()` file (the run use case, in this process), each in the thread it is
    given (RunOptions.thread, when this Aeon has threads)."""
    from aeon.entrypoints.api import RunOptions, stream

    threads = "thread" in RunOptions.__optional_keys__

    def run(request: str, thread: str | None) -> Events:
        given = config()
        options: dict[str, Any] = {"config": given} if given is not None else {}
        if thread is not None and threads:
            options["thread"] = thread
        return stream(request, **options)

    return run


def config_tools(config: Callable[[], Path | None]) -> Callable[[], list[ToolSpec]]:
    """The tools of the `config()` file, as `aeon tools` lists them (its MCP servers started, then stopped)."""

    def listed() -> list[ToolSpec]:
        from aeon.entrypoints.config.layers import load_settings
        from aeon.entrypoints.container import build_container, tools_opened

        with tools_opened(build_container(load_settings(config()))) as tools:
            return tools.list()

    return listed
