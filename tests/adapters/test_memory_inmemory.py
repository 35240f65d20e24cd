"""InMemoryKV: read/write/search semantics and isolation of stored values from callers."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from aeon.adapters.memory import InMemoryKV
from aeon.application.errors import MemoryKeyNotFound, MemoryUnavailable
from aeon.application.ports import MemoryPort


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_in_memory_kv_satisfies_the_memory_port() -> None:
    memory: MemoryPort = InMemoryKV()
    assert isinstance(memory, MemoryPort)


def test_written_value_is_read_back() -> None:
    memory = InMemoryKV()
    run(memory.write("step1.result", {"answer": 15}))
    assert run(memory.read("step1.result")) == {"answer": 15}


def test_overwrite_replaces_the_value() -> None:
    memory = InMemoryKV()
    run(memory.write("k", 1))
    run(memory.write("k", 2))
    assert run(memory.read("k")) == 2
    assert len(memory) == 1


def test_reading_a_missing_key_raises_memory_key_not_found() -> None:
    with pytest.raises(MemoryKeyNotFound) as caught:
        run(InMemoryKV().read("nope"))
    assert str(caught.value) == "memory key not found: 'nope'"


def test_none_is_a_storable_value_distinct_from_missing() -> None:
    memory = InMemoryKV()
    run(memory.write("empty", None))
    assert run(memory.read("empty")) is None
    assert "empty" in memory


def test_search_returns_prefix_matches_in_insertion_order() -> None:
    memory = InMemoryKV()
    for key, value in [("step2.out", 2), ("other", 0), ("step1.out", 1), ("step10.out", 10)]:
        run(memory.write(key, value))
    found = run(memory.search("step1"))
    assert list(found.items()) == [("step1.out", 1), ("step10.out", 10)]
    assert list(run(memory.search(""))) == ["step2.out", "other", "step1.out", "step10.out"]
    assert run(memory.search("zzz")) == {}


def test_overwriting_keeps_the_original_insertion_position() -> None:
    memory = InMemoryKV([("a", 1), ("b", 2)])
    run(memory.write("a", 3))
    assert run(memory.search("")) == {"a": 3, "b": 2}
    assert list(run(memory.search(""))) == ["a", "b"]


def test_mutating_the_written_object_does_not_change_the_stored_value() -> None:
    memory = InMemoryKV()
    value = {"items": [1, 2]}
    run(memory.write("k", value))
    value["items"].append(3)
    assert run(memory.read("k")) == {"items": [1, 2]}


def test_mutating_what_read_or_search_returned_does_not_change_the_stored_value() -> None:
    memory = InMemoryKV()
    run(memory.write("k", {"items": [1, 2]}))
    run(memory.read("k"))["items"].append(99)
    run(memory.search("k"))["k"]["items"].append(98)
    assert run(memory.read("k")) == {"items": [1, 2]}


def test_value_that_cannot_be_copied_raises_memory_unavailable() -> None:
    with pytest.raises(MemoryUnavailable, match="cannot copy the value for 'lock'"):
        run(InMemoryKV().write("lock", threading.Lock()))


def test_stored_values_are_copies_whatever_they_hold_cycles_and_custom_objects_included() -> None:
    import asyncio as _asyncio

    from aeon.adapters.memory.inmemory import InMemoryKV as _KV

    class Box:
        def __init__(self, items: list[int]) -> None:
            self.items = items

    cyclic: dict[str, object] = {"name": "loop"}
    cyclic["self"] = cyclic
    value = {"nested": [{"n": 1}], "box": Box([1]), ("a", 1): "tuple key", "cyclic": cyclic}
    memory = _KV()
    _asyncio.run(memory.write("k", value))
    value["nested"][0]["n"] = 2  # type: ignore[index]
    value["box"].items.append(2)  # type: ignore[attr-defined]
    stored = _asyncio.run(memory.read("k"))
    assert stored["nested"] == [{"n": 1}] and stored["box"].items == [1] and stored[("a", 1)] == "tuple key"
    assert stored["cyclic"]["self"] is stored["cyclic"]
    stored["nested"].append("x")
    assert _asyncio.run(memory.read("k"))["nested"] == [{"n": 1}]
