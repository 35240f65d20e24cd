"""This process's durable side: the DurableRuntime its workflow reaches, composed with the RunFactory it is given
(registered once per process), its engines on the system database, and a run's recorded input."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

import aeon.adapters.durable.schedules
import aeon.adapters.durable.workflow  # noqa: F401 — registers the run workflow before any engine launches
from aeon.adapters.durable import batch as queued
from aeon.adapters.durable.awaiting import awaiting_result, recorded_request
from aeon.adapters.durable.composer import RunComposer, RunFactory, ToolRegistry
from aeon.adapters.durable.engine import BATCH_QUEUE, DurableEngine, QueueLimits, database_url
from aeon.adapters.durable.ops import executor_name
from aeon.adapters.durable.runs import DbosRuns
from aeon.adapters.durable.runtime import DurableRuntime, Outcome, RunSpec, register
from aeon.adapters.durable.schedules import DbosSchedules
from aeon.application.results import RunResult
from aeon.domain.plan import Plan
from aeon.domain.threads import ThreadContext


class DbosProcess:
    """Durable runs on DBOS for this process. The first DbosProcess made registers its runtime, with `factory`, as
    the one the workflow reaches; any later one shares it (see runtime.register)."""

    def __init__(self, factory: RunFactory) -> None:
        self.runtime = register(DurableRuntime(RunComposer(factory)))
        composer = self.runtime.compose
        assert isinstance(composer, RunComposer)
        self.composer, self.factory = composer, composer.factory

    def database(self, settings: Any) -> str:
        return database_url(self.factory.durable(settings).database_url, Path.cwd())

    def engine(
        self,
        settings: Any,
        kind: str,
        *,
        name: str | None = None,
        listen: tuple[str, ...] = (),
        queues: dict[str, QueueLimits] | None = None,
        lease: bool = False,
    ) -> DurableEngine:
        """This process's engine on the configured system database (`with process.engine(...) as engine:`). `lease`:
        it serves the batch queue, so it keeps a lease and takes over the runs of serving processes that died."""
        durable = self.factory.durable(settings)
        engine = DurableEngine(
            self.database(settings),
            executor_id=executor_name(kind, name),
            listen=listen,
            queues=queues,
            grace=durable.recover_after_seconds if lease else None,
        )
        self.runtime.engine = engine
        return engine

    def batch_engine(
        self, settings: Any, name: str, *, concurrency: int, rate: float | None, serve: bool
    ) -> DurableEngine:
        """The engine of `aeon batch` `name`: it sets the queue's limits, and serves the queue too with `serve`."""
        listen = (BATCH_QUEUE,) if serve else ("aeon-none",)
        limits = {BATCH_QUEUE: QueueLimits(concurrency=concurrency, per_minute=rate)}
        return self.engine(settings, "batch", name=name, listen=listen, queues=limits, lease=serve)

    def worker_engine(self, settings: Any, name: str) -> DurableEngine:
        """The engine of `aeon worker` `name`: it serves the batch queue, with the limits the batch set."""
        queues = {BATCH_QUEUE: QueueLimits()}
        return self.engine(settings, "worker", name=name, listen=(BATCH_QUEUE,), queues=queues, lease=True)

    @contextlib.contextmanager
    def runs(self, settings: Any, kind: str) -> Iterator[DbosRuns]:
        """The runs on the record, through an engine of this process open meanwhile."""
        with self.engine(settings, kind) as engine:
            yield DbosRuns(engine)

    @contextlib.contextmanager
    def direct(
        self, spec: RunSpec, settings: Any, *, container: Any | None = None, tools: ToolRegistry | None = None
    ) -> Iterator[DbosRuns]:
        """Meanwhile run `spec` can start here (DbosRuns.start), composed from the `settings` its command loaded and
        by its `container` (one per process), with the `tools` the command started (their MCP servers start once)."""
        self.composer.settle(spec, settings, container)
        with self.composer.lent_tools(settings, tools), self.runs(settings, "run") as runs:
            yield runs

    @contextlib.contextmanager
    def schedules(self, settings: Any) -> Iterator[DbosSchedules]:
        """The schedules on the configured system database, through an engine of this process open meanwhile."""
        with self.engine(settings, "schedule") as engine:
            yield DbosSchedules(engine.client)

    def recorded_spec(self, settings: Any, config: Path | None, request: str) -> str:
        """The recorded input (redacted, paths absolute) of a run of `request` with `settings`, loaded from
        `config`: what a schedule's every firing runs."""
        spec = spec_for(request, config, {}, log_path=self.factory.log_file(settings)[0], plan=None, run_id="-")
        self.composer.settle(spec, settings)
        return self.composer.recorded_input(spec)

    def awaiting(
        self, runs: DbosRuns, run_id: str, outcome: Outcome, settings: Any = None, request: str | None = None
    ) -> RunResult:
        """What run `run_id`, waiting for a decision (`outcome.awaiting`), shows; its request read from the record
        when not given; its history so far with `settings` and the state the process it waits in knows."""
        assert outcome.awaiting is not None
        judging = self.factory.judging(settings) if settings is not None else None
        said = request if request is not None else recorded_request(runs.engine.client, run_id)
        return awaiting_result(run_id, said, outcome.awaiting, outcome.state, judging)

    def batch_name(self, settings: Any, bid: str, count: int, *, fresh: bool) -> tuple[str, int, int]:
        """The name of batch `bid` and how many of its `count` runs are on the record: (name, ended, not ended)."""
        return queued.name_for(self.database(settings), bid, count, fresh=fresh)


class QueueOf:
    """The durable queue every `aeon serve`, `aeon worker` and `aeon batch` process takes runs from, as the Queue of
    the queueing use case (application/runs/queued.py): each run rebuilt from `config` and its client's overrides,
    its log at `log_path` (made absolute, so any process in any folder writes the same file)."""

    def __init__(self, config: Path | None, log_path: Path | None) -> None:
        self._config, self._log = config, log_path

    def submit(
        self, run_id: str, request: str, *, overrides: Mapping[str, Any], thread: ThreadContext | None = None
    ) -> None:
        overrides, log, config = dict(overrides), self._log, self._config
        spec = spec_for(request, config, overrides, log_path=log, plan=None, run_id=run_id, thread=thread)
        queued.enqueue_spec(spec)


def spec_for(
    request: str,
    config: Path | None,
    overrides: dict[str, Any],
    *,
    log_path: Path | None,
    plan: Plan | str | None,
    run_id: str | None = None,
    thread: ThreadContext | None = None,
) -> RunSpec:
    """Run `run_id`'s recorded input (a new id when None): paths made absolute, so any process in any folder can
    execute it."""
    fixed = dict(overrides)
    if log_path is not None:
        fixed["log.path"] = str(log_path.resolve())
    if isinstance(plan, Plan):
        plan = msgspec.json.encode(plan).decode()
    return RunSpec(
        run_id=run_id or str(uuid.uuid4()),
        request=request,
        started_at=datetime.now(UTC).isoformat(),
        config=str(config.resolve()) if config is not None else None,
        overrides=fixed,
        plan=plan,
        thread=thread,
    )
