"""A2A test agents built with the a2a-sdk's own server classes, served by uvicorn on a free port of 127.0.0.1 in a
thread: `serve(app)` yields its base URL. `echo_agent(url)` answers by what a message starts with: "slow" sleeps,
"flood" sends 64 KiB, "ask" wants more input, "fail" fails, anything else is echoed back as an artifact."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

from mcp_harness import free_port

HEARD: list[str] = []  # every message the echo agent received, in order


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        HEARD.append(text)
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if text.startswith("slow"):
            await asyncio.sleep(30)
        if text.startswith("ask"):
            await updater.requires_input(updater.new_agent_message([new_text_part("which city?")]))
            return
        if text.startswith("fail"):
            await updater.failed(updater.new_agent_message([new_text_part("cannot do that")]))
            return
        reply = "x" * 65536 if text.startswith("flood") else f"echo: {text}"
        await updater.add_artifact([new_text_part(reply)], name="reply")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def echo_agent(url: str) -> Starlette:
    card = AgentCard(
        name="echo",
        description="Echoes what it is told.",
        version="1.0",
        supported_interfaces=[AgentInterface(protocol_binding="JSONRPC", url=url)],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["test"])],
    )
    handler = DefaultRequestHandler(agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card)
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])


@contextlib.contextmanager
def serve(build: Callable[[str], Starlette]) -> Iterator[str]:
    """The app `build(base_url)` makes, served on a free port until the block ends; its base URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(uvicorn.Config(build(url), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the test server did not start on port {port}")
        time.sleep(0.02)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


__all__ = ["HEARD", "echo_agent", "new_text_message", "serve"]
