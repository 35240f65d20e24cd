"""InMemoryKV: a process-local MemoryPort backed by a dict, isolated from callers by deep copies."""

from __future__ import annotations

from collections.abc import Iterable
from copy import deepcopy
from typing import Any

from aeon.application.errors import MemoryKeyNotFound, MemoryUnavailable


class InMemoryKV:
    """Satisfies MemoryPort. Values are deep-copied on the way in and out, so no caller can change stored state.

    Overwriting a key keeps its original insertion position, which is the order `search` reports.
    """

    def __init__(self, initial: Iterable[tuple[str, Any]] = ()) -> None:
        self._data: dict[str, Any] = {}
        for key, value in initial:
            self._data[key] = _copy(key, value)

    async def write(self, key: str, value: Any) -> None:
        self._data[key] = _copy(key, value)

    async def read(self, key: str) -> Any:
        try:
            stored = self._data[key]
        except KeyError:
            raise MemoryKeyNotFound(f"memory key not found: {key!r}") from None
        return _copy(key, stored)

    async def search(self, prefix: str) -> dict[str, Any]:
        """Every entry whose key starts with `prefix` (all entries for ""), in insertion order."""
        return {key: _copy(key, value) for key, value in self._data.items() if key.startswith(prefix)}

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data


def _copy(key: str, value: Any) -> Any:
    try:
        try:
            return _copy_json(value)
        except RecursionError:  # a value that holds itself: deepcopy keeps the cycle
            return deepcopy(value)
    except Exception as exc:
        # Only port errors may escape an adapter: a value that cannot be copied (a lock, a socket) cannot be stored.
        raise MemoryUnavailable(f"memory cannot copy the value for {key!r}: {type(exc).__name__}: {exc}") from exc


_ATOMS = (str, int, float, bool, type(None))


def _copy_json(value: Any) -> Any:
    """deepcopy, fast for what memory mostly holds (dicts, lists and scalars); anything else goes to deepcopy."""
    kind = type(value)
    if kind is dict and all(type(k) in _ATOMS for k in value):
        return {k: _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) for v in value]
    if kind in _ATOMS:
        return value
    return deepcopy(value)
