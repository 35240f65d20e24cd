"""Server-sent events as the web doors send them: a stream of events with keep-alive pings and no caching, and the
loop that follows a page's state (application/views/feed) until nothing more can change."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from aeon.application.views.feed import Feed, Seen

PING = 15  # seconds between keep-alive comments


def event_stream(events: AsyncIterator[dict[str, str]]) -> Response:
    """`events` (each a dict of `event`, `data`, `id` …) sent as server-sent events, never cached."""
    return EventSourceResponse(events, ping=PING, headers={"cache-control": "no-store"})


def followed(look: Callable[[], Seen | None], status: str, every: float) -> Response:
    """What `look()` sees (off the event loop, every `every` seconds) sent as the Feed's events, from `status` (the
    one the page shows), to the feed's `end`."""

    async def events() -> AsyncIterator[dict[str, str]]:
        feed = Feed(status)
        while True:
            sent = feed.events(await run_in_threadpool(look))
            for event in sent:
                yield event
            if sent and sent[-1]["event"] == "end":
                return
            await asyncio.sleep(every)

    return event_stream(events())
