"""`aeon serve`'s Agent2Agent routes, built with the a2a-sdk's server: the agent card at the protocol's well-known
path, JSON-RPC at /a2a (SendMessage, SendStreamingMessage; message/send and message/stream for v0.3 clients), the
agent Aeon's run executor (a2a_executor.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import metadata
from typing import Any

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCard
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from google.protobuf.json_format import ParseDict
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from aeon.adapters.protocols.a2a_executor import Answer, RunExecutor, Source
from aeon.application.views.a2a import agent_card
from aeon.domain.tools import ToolSpec

RPC_PATH = "/a2a"


def a2a_routes(source: Source, tools: Callable[[], list[ToolSpec]], answer: Answer) -> list[BaseRoute]:
    """The A2A routes: the agent card (application/views/a2a.agent_card, its skills `tools()`, listed when the card
    is first asked for) for the JSON-RPC endpoint as the client reached this server, and the endpoint, whose tasks
    are runs from `source` and whose replies to a waiting task `answer` hands the run."""
    base = ParseDict(_card("http://localhost" + RPC_PATH, []), AgentCard())  # the handler's: its capabilities
    executor = RunExecutor(source, answer)
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=base)
    listed = functools.cache(tools)

    async def served_card(request: Request) -> Response:
        url = str(request.base_url).rstrip("/") + RPC_PATH
        card = _card(url, await run_in_threadpool(listed))
        shown = agent_card_to_dict(ParseDict(card, AgentCard()))  # with the fields v0.3 clients read
        return JSONResponse(shown, headers={"cache-control": "no-store"})

    well_known = Route(AGENT_CARD_WELL_KNOWN_PATH, served_card, methods=["GET"])
    return [well_known, *create_jsonrpc_routes(handler, RPC_PATH, enable_v0_3_compat=True)]


def _card(url: str, tools: list[ToolSpec]) -> dict[str, Any]:
    said = "An LLM orchestration kernel: send a request; it plans, runs the tools, checks the answer and replies."
    return agent_card(name="aeon", description=said, url=url, version=metadata.version("aeon"), tools=tools)
