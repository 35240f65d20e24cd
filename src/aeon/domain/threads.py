"""Threads: runs that remember. A thread keeps its turns (each run's request, answer, status and id) and a bounded
key/value memory; a follow-up run is given a bounded view of it (ThreadContext) and sees the conversation so far.

An answer that quoted untrusted data keeps that label in the thread: it enters a later prompt fenced as data, and
its label flows into the follow-up run as a tool output's would (domain/provenance)."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from aeon.domain.provenance import TRUSTED, Label, fence
from aeon.domain.text import cut

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
MEMORY_PREFIX = "step:"  # where a run's key/value memory keeps step results (a follow-up's are seeded there)


class ThreadLimits(msgspec.Struct, frozen=True, kw_only=True):
    """How much a thread keeps and a follow-up sees: the last `turns` turns, each text cut at `chars`; at most
    `memory` memory entries, each value cut at `chars`; at most `kept` turns stored."""

    turns: int = 6
    chars: int = 2000
    memory: int = 24
    kept: int = 200


class Turn(msgspec.Struct, frozen=True, kw_only=True):
    """One run of a thread, as the thread keeps it (redacted). `label`: the answer's provenance."""

    run_id: str
    number: int  # 1 for the thread's first turn; a turn's memory keys start with `t<number>.`
    request: str
    answer: str | None
    status: str
    at: str  # ISO 8601, UTC
    label: Label = TRUSTED


class MemoryEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One key/value memory entry of a thread, with the provenance of its value."""

    key: str
    value: Any
    label: Label = TRUSTED


class Thread(msgspec.Struct, kw_only=True):
    """A thread as stored: its turns, oldest first, and its memory, oldest first."""

    name: str
    created_at: str
    updated_at: str
    turns: list[Turn] = msgspec.field(default_factory=list)
    memory: list[MemoryEntry] = msgspec.field(default_factory=list)


class ThreadSummary(msgspec.Struct, frozen=True, kw_only=True):
    """What `aeon threads` lists."""

    name: str
    turns: int
    updated_at: str


class ThreadContext(msgspec.Struct, frozen=True, kw_only=True):
    """What a follow-up run is given of its thread (recorded with a durable run's input): the conversation section
    of the planner's prompt, the memory entries it is seeded with, and their labels."""

    name: str
    conversation: str
    memory: dict[str, Any] = msgspec.field(default_factory=dict)
    labels: dict[str, Label] = msgspec.field(default_factory=dict)  # memory key → label (untrusted only)
    label: Label = TRUSTED  # the join of every label above: what a prompt holding the context is


def valid_name(name: str) -> str | None:
    """Why `name` cannot name a thread, or None."""
    if NAME.fullmatch(name):
        return None
    return f"thread name {name!r} must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit"


def context_of(thread: Thread, limits: ThreadLimits) -> ThreadContext:
    """The bounded view of `thread` a follow-up is given (its conversation empty when it has no turn yet)."""
    lines, label = [], TRUSTED
    for turn in thread.turns[-limits.turns :]:
        lines.append(f"Earlier request: {cut(turn.request, limits.chars)}")
        answer = cut(turn.answer, limits.chars) if turn.answer is not None else f"(no answer: {turn.status})"
        if not turn.label.trusted:
            answer = fence(answer, ", ".join(turn.label.sources) or "untrusted data")
            label = label.join(turn.label)
        lines.append(f"Earlier answer: {answer}")
    memory, labels = {}, {}
    for entry in thread.memory[-limits.memory :]:
        key = f"{MEMORY_PREFIX}{entry.key}"
        memory[key] = entry.value
        if not entry.label.trusted:
            memory[key] = fence(as_json(entry.value), ", ".join(entry.label.sources) or "untrusted data")
            labels[key] = entry.label
            label = label.join(entry.label)
    return ThreadContext(name=thread.name, conversation="\n".join(lines), memory=memory, labels=labels, label=label)


def as_json(value: Any) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def bounded_value(value: Any, limit: int) -> Any:
    """`value` as a thread keeps it: itself when its JSON fits in `limit` characters, else its JSON text cut."""
    text = as_json(value)
    return value if len(text) <= limit else cut(text, limit)


def number_for(thread: Thread, run_id: str) -> int:
    """The number of run `run_id`'s turn in `thread`: its own when it has one already, else the next."""
    for turn in thread.turns:
        if turn.run_id == run_id:
            return turn.number
    return thread.turns[-1].number + 1 if thread.turns else 1


def with_turn(thread: Thread, turn: Turn, memory: list[MemoryEntry], limits: ThreadLimits) -> Thread:
    """`thread` with `turn` (replacing an earlier turn of the same run: appending is idempotent) and `memory` added,
    within `limits`."""
    turns = [t for t in thread.turns if t.run_id != turn.run_id] + [turn]
    keys = {entry.key for entry in memory}
    kept = [entry for entry in thread.memory if entry.key not in keys] + memory
    return Thread(
        name=thread.name,
        created_at=thread.created_at,
        updated_at=turn.at,
        turns=turns[-limits.kept :],
        memory=kept[-limits.memory :],
    )
