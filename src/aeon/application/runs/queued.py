"""The run use case for a door that only queues (`aeon serve`): a client's request and the run options the server
allows it, checked, then one call on a queue any process serving it takes the run from."""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from aeon.application.errors import InputError
from aeon.application.kernel.sections import RunSection
from aeon.domain.text import request_problem
from aeon.domain.threads import ThreadContext


class Queue(Protocol):
    """Where a queued run waits for a process to take it (DbosRuns on the durable queue)."""

    def submit(
        self, run_id: str, request: str, *, overrides: Mapping[str, Any], thread: ThreadContext | None = None
    ) -> None: ...


def client_overrides(options: Mapping[str, Any], allowed: Collection[str]) -> dict[str, Any]:
    """The settings a client's run `options` override, each one the server `allowed`; InputError naming the first
    option that is not allowed or whose value does not fit."""
    for name in options:
        if name not in allowed:
            may = ", ".join(sorted(allowed)) or "none"
            raise InputError(f"{name!r} may not be set by a client of this server (it allows: {may})")
    try:
        RunSection.model_validate(dict(options))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(f"{'.'.join(str(p) for p in first['loc'])!r}: {first['msg']}") from exc
    overrides = {f"run.{name}": value for name, value in options.items()}
    if "ttl" in options:
        overrides["run.ttl_given"] = True
    return overrides


_last = [0]
_ids = threading.Lock()


def ordered_id() -> str:
    """A new run id that sorts after every one made before in this process (a UUIDv7: milliseconds, then random), so
    that runs queued within the same second, as the record dates them, list newest first all the same."""
    with _ids:
        now = max(time.time_ns() // 1_000_000, _last[0] + 1)  # one millisecond per id at most: strictly increasing
        _last[0] = now
    value = (now << 80) | (0x7 << 76) | (secrets.randbits(12) << 64) | (0b10 << 62) | secrets.randbits(62)
    return str(uuid.UUID(int=value))


@dataclass(frozen=True)
class QueuedRuns:
    """`submit(request, options)`: the request checked, the options the server `allowed` turned into overrides, the
    run put on `queue` as run `new_id()`, whose id it returns. Raises InputError before anything is queued."""

    queue: Queue
    allowed: Collection[str]
    new_id: Callable[[], str] = ordered_id
    queued: Callable[[str], None] = lambda _: None  # told each run id queued (the webhook watches it)

    def submit(self, request: Any, options: Mapping[str, Any], thread: ThreadContext | None = None) -> str:
        """The queued run's id; `thread`: the context of the thread it belongs to (Threads.context)."""
        if not isinstance(request, str):
            raise InputError("'request' must be a string: what you want done")
        if (problem := request_problem(request)) is not None:
            raise InputError(problem)
        overrides = client_overrides(options, self.allowed)
        run_id = self.new_id()
        self.queue.submit(run_id, request, overrides=overrides, thread=thread)
        self.queued(run_id)
        return run_id
