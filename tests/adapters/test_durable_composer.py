"""The durable adapter composes a run with the RunFactory it is given (Aeon's container lives in the entrypoints):
each recorded config is loaded once per process and its tools built once; a server's engine stays up while a run of
its process may still need it."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from aeon.adapters.durable.composer import RunComposer, RunFactory
from aeon.adapters.durable.process import DbosProcess
from aeon.adapters.durable.runtime import RunSpec
from aeon.adapters.durable.served import ServedRuns


class CountingFactory:
    def __init__(self) -> None:
        self.loads: list[tuple[str | None, dict[str, Any]]] = []
        self.built: list[str] = []

    def load(self, config: str | None, overrides: dict[str, Any]) -> dict[str, Any]:
        self.loads.append((config, overrides))
        return {"config": config, "tools": overrides.get("tools.modules", "")}

    def tools_key(self, settings: dict[str, Any]) -> str:
        return str(settings["tools"])

    def tools(self, settings: dict[str, Any]) -> Any:
        self.built.append(self.tools_key(settings))
        return object()


def _spec(config: str, **overrides: Any) -> RunSpec:
    return RunSpec(run_id="r", request="add 2 and 3", started_at="t", config=config, overrides=overrides)


def test_a_recorded_config_is_loaded_once_per_process_and_its_tools_built_once() -> None:
    factory = CountingFactory()
    composer = RunComposer(cast(RunFactory, factory))
    first = composer.tools(_spec("a.yaml"))
    again = composer.tools(_spec("a.yaml"))
    other = composer.tools(_spec("b.yaml"))  # another config with the same tools config: the same tools
    assert factory.loads == [("a.yaml", {}), ("b.yaml", {})]
    assert first is again is other and factory.built == [""]
    composer.tools(_spec("a.yaml", **{"tools.modules": "calc"}))
    assert factory.built == ["", "calc"]


def test_the_settings_a_command_loaded_stand_for_its_runs_config() -> None:
    factory = CountingFactory()
    composer = RunComposer(cast(RunFactory, factory))
    composer.settle(_spec("a.yaml"), {"config": "a.yaml", "tools": ""})
    composer.tools(_spec("a.yaml"))
    assert factory.loads == []  # loaded once, by the command


def test_lent_tools_serve_the_runs_meanwhile_and_are_given_back() -> None:
    factory = CountingFactory()
    composer = RunComposer(cast(RunFactory, factory))
    settings = {"config": "a.yaml", "tools": ""}
    lent = cast(Any, object())
    with composer.lent_tools(settings, lent):
        assert composer.shared_tools(settings) is lent
    assert composer.shared_tools(settings) is not lent and factory.built == [""]


def test_a_server_whose_run_was_cancelled_leaves_dbos_up() -> None:
    served = ServedRuns(cast(DbosProcess, None), lambda: None)
    assert asyncio.run(served.close()) is True  # nothing opened, nothing left running: it may shut down
    asyncio.run(served.cancel(["r1"]))
    assert asyncio.run(served.close()) is False  # the run may still be in a step: shutting DBOS down would cancel it
