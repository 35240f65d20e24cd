"""Schedules on DBOS's scheduled workflows: added, listed, paused, resumed, removed; a cron expression that is not
one is refused in one line; and with two workers on one system database each tick makes exactly one run, an
ordinary durable run on the record (its side effect once)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from durable_harness import aeon, start, wait_for
from durable_harness import config as harness_config

PLAN = json.dumps(
    {"goal": "g", "steps": [{"step_id": "s1", "description": "note", "tool": "record", "args": {"text": "tick"}}]}
)


POSTGRES = os.environ.get("AEON_TEST_POSTGRES_URL", "")


def _config(tmp_path: Path, database_url: str | None = None) -> Path:
    script = tmp_path / "scheduled.script.yaml"
    script.write_text(yaml.safe_dump({"responses": [PLAN]}))
    llm = {"adapter": "scripted", "script": str(script)}
    return harness_config(tmp_path, "scheduled.yaml", llm, database_url=database_url, evaluate=False)


def _listed(tmp_path: Path) -> list[dict[str, Any]]:
    done = aeon(tmp_path, "schedule", "list", "--json")
    assert done.returncode == 0, done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


def test_a_schedule_is_added_listed_paused_resumed_and_removed(tmp_path: Path) -> None:
    config = _config(tmp_path)
    added = aeon(tmp_path, "schedule", "add", "0 7 * * *", "summarise yesterday's tickets", "--config", config)
    assert added.returncode == 0, added.stderr
    assert "schedule summarise-yesterday-s-tickets added: 0 7 * * *" in added.stdout
    named = aeon(tmp_path, "schedule", "add", "*/10 * * * * *", "note it", "--name", "often", "--config", config)
    assert named.returncode == 0, named.stderr

    listed = _listed(tmp_path)
    assert [(s["name"], s["cron"], s["paused"]) for s in listed] == [
        ("often", "*/10 * * * * *", False),
        ("summarise-yesterday-s-tickets", "0 7 * * *", False),
    ]
    assert listed[1]["request"] == "summarise yesterday's tickets" and listed[1]["config"] == str(config)

    assert aeon(tmp_path, "schedule", "pause", "often").returncode == 0
    assert [s["paused"] for s in _listed(tmp_path)] == [True, False]
    assert re.search(
        r"^often +\*/10 \* \* \* \* \*  paused  not fired yet  'note it'$",
        aeon(tmp_path, "schedule", "list").stdout,
        re.M,
    )
    assert aeon(tmp_path, "schedule", "resume", "often").returncode == 0
    assert [s["paused"] for s in _listed(tmp_path)] == [False, False]
    assert aeon(tmp_path, "schedule", "remove", "often").returncode == 0
    assert [s["name"] for s in _listed(tmp_path)] == ["summarise-yesterday-s-tickets"]

    again = aeon(tmp_path, "schedule", "add", "0 8 * * *", "summarise yesterday's tickets", "--config", config)
    assert again.returncode == 2 and "exists already" in again.stderr
    gone = aeon(tmp_path, "schedule", "pause", "often")
    assert gone.returncode == 2 and "no schedule named 'often'" in gone.stderr


@pytest.mark.parametrize("cron", ["0 7 * *", "61 7 * * *", "every day", "* * * * * * *"])
def test_a_cron_expression_that_is_not_one_is_refused_in_one_line(tmp_path: Path, cron: str) -> None:
    done = aeon(tmp_path, "schedule", "add", cron, "note it", "--config", _config(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"aeon: {cron!r} is not a cron expression: five fields, minute hour day-of-month month day-of-week, in UTC "
        '("0 7 * * *": every day at 07:00), or six with seconds first ("*/10 * * * * *": every 10 seconds)'
    ]
    assert _listed(tmp_path) == []


def _stop(worker: subprocess.Popen[str]) -> None:
    worker.send_signal(signal.SIGTERM)
    worker.wait(30)


@pytest.mark.parametrize(
    "database",
    [
        "sqlite",
        pytest.param(
            "postgres", marks=pytest.mark.skipif(not POSTGRES, reason="no Postgres: set AEON_TEST_POSTGRES_URL")
        ),
    ],
)
def test_each_tick_makes_one_run_with_two_workers(tmp_path: Path, database: str) -> None:
    config = _config(tmp_path, POSTGRES if database == "postgres" else None)
    tick = f"tick{uuid.uuid4().hex[:8]}"  # the database may be shared with other tests

    def made() -> list[dict[str, Any]]:
        listed = aeon(tmp_path, "runs", "--json", "--config", config)
        assert listed.returncode == 0, listed.stderr
        return [r for r in json.loads(listed.stdout) if r["id"].startswith(f"schedule-{tick}-")]

    added = aeon(tmp_path, "schedule", "add", "* * * * * *", "note the tick", "--name", tick, "--config", config)
    assert added.returncode == 0, added.stderr
    workers = [start(tmp_path, "worker", "--name", f"{tick}-{n}", "--config", config) for n in ("a", "b")]
    try:
        wait_for(lambda: sum(r["status"] == "completed" for r in made()) >= 3, timeout=60, what="three ticks")
        assert aeon(tmp_path, "schedule", "pause", tick, "--config", config).returncode == 0
        wait_for(lambda: all(r["status"] == "completed" for r in made()), what="the last ticks' runs")
    finally:
        for worker in workers:
            _stop(worker)
    ids = [r["id"] for r in made()]
    assert len(ids) == len(set(ids)) >= 3
    assert {r["request"] for r in made()} == {"note the tick"}
    effects = (tmp_path / "effects.txt").read_text().splitlines()
    assert effects == ["tick"] * len(ids)  # each tick's run made its side effect once, across both workers
    shown = aeon(tmp_path, "schedule", "list", "--json", "--config", config)
    assert [s["last_fired"] is not None for s in json.loads(shown.stdout) if s["name"] == tick] == [True]
    assert aeon(tmp_path, "schedule", "remove", tick, "--config", config).returncode == 0
