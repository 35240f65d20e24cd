"""The schedules use case (`aeon schedule add/list/pause/resume/remove`, and the same over HTTP): names and requests
checked, then one call on the SchedulesPort."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aeon.application.errors import InputError
from aeon.application.ports import SchedulesPort
from aeon.domain.schedules import Schedule, name_for, valid_name
from aeon.domain.text import request_problem


def checked_name(name: str) -> str:
    if (problem := valid_name(name)) is not None:
        raise InputError(problem)
    return name


@dataclass(frozen=True)
class Schedules:
    """Schedules on `port`; `spec_for(request)` is the recorded input of a run of `request` with the caller's
    config (redacted), which the schedule runs at every tick. Raises InputError for a bad request, name or cron
    expression, and what the port raises."""

    port: SchedulesPort
    spec_for: Callable[[str], str]

    def add(self, cron: str, request: str, name: str | None = None) -> Schedule:
        if (problem := request_problem(request)) is not None:
            raise InputError(problem)
        return self.port.add(checked_name(name or name_for(request)), cron, self.spec_for(request))

    def list(self) -> list[Schedule]:
        return self.port.list()

    def pause(self, name: str) -> None:
        self.port.pause(checked_name(name))

    def resume(self, name: str) -> None:
        self.port.resume(checked_name(name))

    def remove(self, name: str) -> None:
        self.port.remove(checked_name(name))
