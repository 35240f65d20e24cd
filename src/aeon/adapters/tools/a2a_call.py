"""One call of a remote A2A agent (A2ATools.invoke): the a2a-sdk client over an httpx transport whose responses
are bounded in bytes; the agent's reply (a message, or its task's end) as a ToolResult."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

import httpx

from aeon.domain.tools import ToolResult

if TYPE_CHECKING:
    from a2a.types import Task


MAX_ERROR_TEXT = 2000


class ResponseTooLarge(Exception):
    """The agent sent more than its bound."""


async def ask(
    name: str,
    url: str,
    headers: Mapping[str, str],
    message: str,
    transport: httpx.AsyncBaseTransport,
    limit: float | None,
) -> ToolResult:
    from a2a.client import ClientConfig, create_client  # the SDK, only when an agent is called
    from a2a.helpers import get_message_text, new_text_message
    from a2a.types import Role, SendMessageRequest

    async with httpx.AsyncClient(transport=transport, headers=dict(headers), timeout=limit) as http:
        client = await create_client(url, ClientConfig(streaming=False, httpx_client=http))
        request = SendMessageRequest(message=new_text_message(message, role=Role.ROLE_USER))
        async for response in client.send_message(request):
            if response.HasField("message"):
                return ToolResult(output=get_message_text(response.message))
            if response.HasField("task"):
                return _task_result(name, response.task)
    return ToolResult(error=f"A2A agent {name!r} sent no reply")


def _task_result(name: str, task: Task) -> ToolResult:
    """A task's end as a tool's answer: completed, its artifacts' text (the status message when it has none); any
    other state an error saying which, with what the agent said."""
    from a2a.helpers import get_artifact_text, get_message_text
    from a2a.types import TaskState

    said = get_message_text(task.status.message) if task.status.HasField("message") else ""
    if task.status.state == TaskState.TASK_STATE_COMPLETED:
        texts = [get_artifact_text(a) for a in task.artifacts]
        return ToolResult(output="\n".join(t for t in texts if t) or said)
    state = TaskState.Name(task.status.state).removeprefix("TASK_STATE_").lower().replace("_", "-")
    ended = f"A2A agent {name!r} ended its task {state}" + (f": {said}" if said else "")
    return ToolResult(error=ended if len(ended) <= MAX_ERROR_TEXT else ended[: MAX_ERROR_TEXT - 1] + "…")


class CappedTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose responses stop with ResponseTooLarge past `limit` bytes (all of a call's together);
    `exceeded` tells the caller, whatever the SDK made of the exception."""

    def __init__(self, limit: int) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._left = limit
        self.exceeded = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code, headers=response.headers, stream=_Capped(self, stream), extensions=response.extensions
        )

    def take(self, size: int) -> None:
        self._left -= size
        if self._left < 0:
            self.exceeded = True
            raise ResponseTooLarge("the agent sent more than its bound")

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Capped(httpx.AsyncByteStream):
    def __init__(self, owner: CappedTransport, inner: httpx.AsyncByteStream) -> None:
        self._owner = owner
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._owner.take(len(chunk))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()
