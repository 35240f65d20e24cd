"""The load bench's event followers (bench/serve_load.py): a run's GET /runs/{id}/events read as a client does, from
its start to the `end` event; when its server goes away (killed), read on from another with Last-Event-ID."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

import httpx


@dataclass
class Followed:
    """What one follower saw: the records' seqs in order, when the end event came (epoch seconds, None: never), why
    the stream ended, and how many times it reconnected."""

    run_id: str
    seqs: list[int] = field(default_factory=list)
    end_at: float | None = None
    why: str = ""
    reconnects: int = 0
    events: list[str] = field(default_factory=list)


def follow(urls: list[str], run_id: str, first: int, timeout: float) -> Followed:
    """Follow run `run_id`'s events from server `urls[first]`, moving on to the next server when one fails."""
    seen = Followed(run_id)
    deadline, turn = time.monotonic() + timeout, first
    while seen.end_at is None and time.monotonic() < deadline:
        headers = {"last-event-id": str(seen.seqs[-1])} if seen.seqs else {}
        try:
            with httpx.stream("GET", f"{urls[turn % len(urls)]}/runs/{run_id}/events", headers=headers,
                              timeout=httpx.Timeout(60, connect=5)) as answer:  # fmt: skip
                if answer.status_code != 200:
                    raise httpx.TransportError(f"status {answer.status_code}")
                _read(answer, seen)
        except httpx.TransportError:
            turn, seen.reconnects = turn + 1, seen.reconnects + 1
            time.sleep(0.2)
    return seen


def _read(answer: httpx.Response, seen: Followed) -> None:
    event: dict[str, str] = {}
    for line in answer.iter_lines():
        if line:
            name, _, value = line.partition(":")
            event[name] = value.removeprefix(" ")
            continue
        if event.get("event") == "end":
            seen.why = json.loads(event.get("data", "{}")).get("why", "")
            if seen.why.startswith("bounded"):  # more to read: on again past the last seq
                raise httpx.TransportError(seen.why)
            seen.end_at = time.time()
            return
        if event.get("id", "").isdigit():
            seen.seqs.append(int(event["id"]))
            seen.events.append(event.get("event", ""))
        event = {}
    raise httpx.TransportError("the stream ended before its end event")


def follow_all(
    urls: list[str], picked: dict[str, int], timeout: float
) -> tuple[list[threading.Thread], list[Followed]]:
    """A follower thread per picked run (run id -> the index of the server it was POSTed to), started."""
    found: list[Followed] = []
    threads = []
    for run_id, first in picked.items():
        thread = threading.Thread(target=lambda r=run_id, f=first: found.append(follow(urls, r, f, timeout)),
                                  daemon=True)  # fmt: skip
        thread.start()
        threads.append(thread)
    return threads, found


def check_streams(found: list[Followed], silent: set[str]) -> list[str]:
    """What is wrong with the streams: each must end with its end event, its records' seqs 0, 1, 2, … once each
    (none lost or repeated across a reconnect), run_start first and run_end last (none for a run in `silent`)."""
    problems = []
    for seen in found:
        ending = [] if seen.run_id in silent else ["run_end"]
        if seen.end_at is None or seen.seqs != list(range(len(seen.seqs))):
            problems.append(f"run {seen.run_id}: seqs {seen.seqs[:5]}…, end {seen.end_at}")
        elif seen.events[:1] != ["run_start"] or (seen.events[-1:] != ending and ending):
            problems.append(f"run {seen.run_id}: events {seen.events[:1]} … {seen.events[-1:]}")
    return problems
