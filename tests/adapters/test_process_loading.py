"""`loading()`: a command's large late imports (DBOS for a durable `aeon run`) made without garbage collections, and
what they loaded left out of every later one."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from aeon.adapters.process import loading


@pytest.fixture(autouse=True)
def _restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_no_collection_runs_while_loading_and_what_was_loaded_is_frozen() -> None:
    gc.enable()
    gc.unfreeze()
    collections: list[int] = []

    def counted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(counted)
    try:
        with loading():
            assert not gc.isenabled()
            loaded = [[i] for i in range(50_000)]  # many times the youngest generation's threshold (700)
        assert collections == []
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(loaded)
        gc.collect()  # the frozen objects are not scanned, but they stay alive
        assert loaded[-1] == [49_999]
    finally:
        gc.callbacks.remove(counted)


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with loading():
        pass
    assert not gc.isenabled()


def test_the_collector_comes_back_when_an_import_fails() -> None:
    gc.enable()
    with pytest.raises(ImportError), loading():
        import aeon_no_such_module  # type: ignore[import-not-found]  # noqa: F401
    assert gc.isenabled()
