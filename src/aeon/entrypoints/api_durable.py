"""The durable side of the Python API: what a durable `aeon.run` records to be rebuilt in any process, and the run
started through the DurableRuns port (DBOS is imported only for a durable run)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from aeon.adapters.tools.composite import CompositeTools
from aeon.adapters.tools.toolset import Toolset
from aeon.application.errors import UsageError
from aeon.application.ports import ApproverPort
from aeon.application.results import RunResult
from aeon.domain.plan import Plan
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.container import Container

PathLike = str | os.PathLike[str]


# DBOS is one per process, launched and destroyed around each durable run: such runs take turns
ONE_ENGINE = threading.Lock()


@dataclass(frozen=True)
class Durable:
    """What a durable run records to be rebuilt in any process: the config file and every other layer over it."""

    settings: Settings
    config_file: Path | None
    overrides: dict[str, Any]
    approver: ApproverPort | None = None  # asks in this process; the decision is sent as the run's DBOS message
    container: Container | None = None  # the call's: it builds the run in this process too (one per process)
    tools: CompositeTools | None = None  # the call's tools, lent to the run: its MCP servers start once


def listed(tools: Iterable[object]) -> list[object]:
    if isinstance(tools, str | ModuleType | Toolset) or callable(tools) or not isinstance(tools, Iterable):
        raise UsageError(f"tools takes a list (tools=[{getattr(tools, '__name__', 'weather')}]), not one tool")
    return list(tools)


def rebuildable(tools: Iterable[object], model: object) -> bool:
    """Whether another process can load the run's tools (modules, or their names) and its model (named) again."""
    named = (t.__name__ if isinstance(t, ModuleType) else t for t in tools)
    return (model is None or isinstance(model, str)) and all(isinstance(n, str) and n != "__main__" for n in named)


def module_names(tools: Iterable[object]) -> list[str]:
    """The tools of a durable run as tools.modules entries, which any process that finishes the run imports."""
    names = []
    for item in tools:
        name = item.__name__ if isinstance(item, ModuleType) else item
        if not isinstance(name, str) or name == "__main__":
            raise UsageError(
                f"a durable run is finished by whatever process resumes it, which imports its tools again: give them "
                f"as modules it can import by name (or tools.modules entries), not {item!r:.60}"
            )
        names.append(name)
    return names


def durably(durable: Durable, request: str, plan: Plan | None) -> RunResult:
    """The run as a DBOS workflow in this process, as `aeon run --durable` starts it (DBOS blocks: a worker thread
    waits for it). It goes on to its end once started: cancelling the call leaves it running, then on the record."""
    from aeon.adapters.durable.process import spec_for  # DBOS is imported only for a durable run
    from aeon.entrypoints.durable.factory import process

    settings = durable.settings
    spec = spec_for(request, durable.config_file, durable.overrides, log_path=settings.log.path, plan=plan)
    lent = process().direct(spec, settings, container=durable.container, tools=durable.tools)
    with ONE_ENGINE, lent as runs:  # loaded once, composed once
        outcome = runs.start(
            spec.run_id, spec.request, plan=spec.plan, config=spec.config, overrides=spec.overrides,
            approver=durable.approver,
        )  # fmt: skip
    assert outcome.result is not None, "only a resumed run stops at a tool call cut off in flight"
    return outcome.result
