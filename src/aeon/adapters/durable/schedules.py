"""Schedules on DBOS's scheduled workflows: DBOS fires workflow `aeon.scheduled` at every tick of a schedule's cron,
in whichever process serving the batch queue sees the tick first (its workflow id names the schedule and the tick,
so a tick fires once across every process), and that workflow enqueues the tick's run on the batch queue as
`schedule-<name>-<tick>`: an ordinary durable run on the record (`aeon runs`, `aeon inspect`), executed by a worker.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from croniter import croniter  # type: ignore[import-untyped]
from dbos import DBOS, DBOSClient, SetWorkflowID

from aeon.adapters.durable.engine import APP_NAME, BATCH_QUEUE
from aeon.adapters.durable.runtime import RunSpec
from aeon.adapters.durable.workflow import run_workflow
from aeon.application.errors import InputError
from aeon.application.ports import SchedulesPort
from aeon.domain.schedules import Schedule, run_id_for

SCHEDULED_WORKFLOW = "aeon.scheduled"
CRON_HELP = (
    'five fields, minute hour day-of-month month day-of-week, in UTC ("0 7 * * *": every day at 07:00), or six with '
    'seconds first ("*/10 * * * * *": every 10 seconds)'
)


class Fired(msgspec.Struct, frozen=True, kw_only=True):
    """What a schedule keeps for its firings: its name and the run's recorded input (redacted, its id a blank)."""

    name: str
    spec: str


@DBOS.workflow(name=SCHEDULED_WORKFLOW)
async def scheduled_workflow(at: datetime, context: str) -> str:
    """One tick of a schedule: its run enqueued on the batch queue. The enqueue is recorded by DBOS, and the run's
    id names the tick: however often this executes, the tick makes one run."""
    fired = msgspec.json.decode(context, type=Fired)
    spec = msgspec.json.decode(fired.spec, type=RunSpec)
    run_id = run_id_for(fired.name, at)
    spec = msgspec.structs.replace(spec, run_id=run_id, started_at=at.isoformat())
    with SetWorkflowID(run_id):
        await DBOS.enqueue_workflow_async(BATCH_QUEUE, run_workflow, msgspec.json.encode(spec).decode())
    return run_id


def cron_problem(cron: str) -> str | None:
    """Why `cron` is not a cron expression DBOS can run, in one line, or None."""
    fields = cron.split()
    if len(fields) in (5, 6) and croniter.is_valid(" ".join(fields), second_at_beginning=True):
        return None
    return f"{cron!r} is not a cron expression: {CRON_HELP}"


class DbosSchedules:
    """SchedulesPort on the system database `client` is open on. A schedule keeps its run's recorded input (the
    `spec` it is added with: redacted, its paths absolute), which every firing copies."""

    def __init__(self, client: DBOSClient) -> None:
        self.client = client

    def add(self, name: str, cron: str, spec: str) -> Schedule:
        if (problem := cron_problem(cron)) is not None:
            raise InputError(problem)
        if self.client.get_schedule(name) is not None:
            raise InputError(f"a schedule named {name!r} exists already (aeon schedule remove {name}, or --name)")
        self.client.create_schedule(
            schedule_name=name,
            workflow_name=SCHEDULED_WORKFLOW,
            schedule=" ".join(cron.split()),
            context=msgspec.json.encode(Fired(name=name, spec=spec)).decode(),
            queue_name=BATCH_QUEUE,
            application_name=APP_NAME,
        )
        return self._known(name)

    def list(self) -> list[Schedule]:
        found = self.client.list_schedules(workflow_name=SCHEDULED_WORKFLOW, application_name=APP_NAME)
        return sorted((_shown(s) for s in found), key=lambda s: s.name)

    def pause(self, name: str) -> None:
        self._known(name)
        self.client.pause_schedule(name)

    def resume(self, name: str) -> None:
        self._known(name)
        self.client.resume_schedule(name)

    def remove(self, name: str) -> None:
        self._known(name)
        self.client.delete_schedule(name)

    def _known(self, name: str) -> Schedule:
        found = self.client.get_schedule(name)
        if found is None or found["workflow_name"] != SCHEDULED_WORKFLOW:
            raise InputError(f"no schedule named {name!r} (aeon schedule list shows them)")
        return _shown(found)


def _shown(found: Any) -> Schedule:
    fired = msgspec.json.decode(str(found["context"]), type=Fired)
    spec = msgspec.json.decode(fired.spec, type=RunSpec)
    return Schedule(
        name=found["schedule_name"],
        cron=found["schedule"],
        request=spec.request,
        config=spec.config,
        paused=found["status"] != "ACTIVE",
        last_fired=found.get("last_fired_at"),
    )


_PORT: type[SchedulesPort] = DbosSchedules  # mypy checks DbosSchedules against the port it satisfies
