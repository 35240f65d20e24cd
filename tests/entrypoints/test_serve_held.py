"""The runs a door holds while they wait for a person's reply are bounded: past the bound the oldest is stopped."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aeon.adapters.protocols.held import Held


def test_past_its_bound_the_oldest_run_held_is_stopped_and_no_longer_held() -> None:
    stopped: list[str] = []

    async def run(name: str) -> AsyncIterator[str]:
        try:
            yield name
            yield "more"
        finally:
            stopped.append(name)

    async def go() -> tuple[Held[str], list[str]]:
        held: Held[str] = Held(most=2)
        for name in ("a", "b", "c"):
            events = run(name)
            await anext(events)  # started: it now waits, as a run waiting for approval does
            await held.keep(name, events, name)
        return held, list(stopped)  # before the loop closes what is left

    held, stopped_by_then = asyncio.run(go())
    assert stopped_by_then == ["a"] and len(held) == 2
    assert held.take("a") is None and held.take("b") is not None and held.take("b") is None
