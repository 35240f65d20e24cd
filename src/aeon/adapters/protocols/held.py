"""The runs a door (A2A, AG-UI) left waiting for a person's reply, each with its events still to come; bounded."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")
MOST_HELD = 256  # past it the oldest run held is stopped (it ends interrupted): a client cannot pile them up


class Held(Generic[T]):
    """`keep(key, events, value)` holds a waiting run, `take(key)` hands it back once (None: not held)."""

    def __init__(self, most: int = MOST_HELD) -> None:
        self._most = most
        self._held: dict[str, tuple[AsyncIterator[Any], T]] = {}

    async def keep(self, key: str, events: AsyncIterator[Any], value: T) -> None:
        self._held[key] = (events, value)
        while len(self._held) > self._most:
            stopped, _ = self._held.pop(next(iter(self._held)))
            with contextlib.suppress(Exception):
                await stopped.aclose()  # type: ignore[attr-defined]

    def take(self, key: str) -> tuple[AsyncIterator[Any], T] | None:
        return self._held.pop(key, None)

    def __len__(self) -> int:
        return len(self._held)
