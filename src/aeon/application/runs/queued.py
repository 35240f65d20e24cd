"""The run use case for a door that only queues (`aeon serve`): a client's request and the run options the server
allows it, checked, then one call on a queue any process serving it takes the run from."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from aeon.application.errors import InputError
from aeon.application.kernel.sections import RunSection
from aeon.domain.text import request_problem


class Queue(Protocol):
    """Where a queued run waits for a process to take it (DbosRuns on the durable queue)."""

    def submit(self, run_id: str, request: str, *, overrides: Mapping[str, Any]) -> None: ...


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


@dataclass(frozen=True)
class QueuedRuns:
    """`submit(request, options)`: the request checked, the options the server `allowed` turned into overrides, the
    run put on `queue` as run `new_id()`, whose id it returns. Raises InputError before anything is queued."""

    queue: Queue
    allowed: Collection[str]
    new_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))

    def submit(self, request: Any, options: Mapping[str, Any]) -> str:
        if not isinstance(request, str):
            raise InputError("'request' must be a string: what you want done")
        if (problem := request_problem(request)) is not None:
            raise InputError(problem)
        overrides = client_overrides(options, self.allowed)
        run_id = self.new_id()
        self.queue.submit(run_id, request, overrides=overrides)
        return run_id
