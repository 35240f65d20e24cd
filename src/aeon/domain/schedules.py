"""Schedules: a request run by cron (DBOS's scheduled workflows); each firing is an ordinary durable run whose id
names its schedule and tick, so that one tick makes one run however many processes serve the schedule."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import msgspec

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
RUN_PREFIX = "schedule-"


class Schedule(msgspec.Struct, frozen=True, kw_only=True):
    """A schedule as `aeon schedule list` shows it: its cron (UTC), request, config file, whether it is paused, and
    when it last fired (ISO 8601, None: never)."""

    name: str
    cron: str
    request: str
    config: str | None = None
    paused: bool = False
    last_fired: str | None = None


def valid_name(name: str) -> str | None:
    """Why `name` cannot name a schedule, or None."""
    if NAME.fullmatch(name):
        return None
    return f"schedule name {name!r} must be 1-64 letters, digits, '_' or '-', starting with a letter or digit"


def name_for(request: str) -> str:
    """A schedule's name made from its request when none is given: its first words, lower case, dashed."""
    words = re.findall(r"[a-z0-9]+", request.lower())
    name = "-".join(words)[:40].strip("-")
    return name or "schedule"


def run_id_for(name: str, at: datetime) -> str:
    """The id of the run schedule `name` makes for its tick at `at`: `schedule-<name>-<UTC time>`."""
    return f"{RUN_PREFIX}{name}-{at.astimezone(UTC):%Y%m%dT%H%M%SZ}"
