"""The queueing use case of `aeon serve` (application/runs/queued.py): a client's request and the run options the
server allows become one queued run; any other option, a value that does not fit, or no request is refused naming
it, before anything is queued."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from aeon.application.errors import InputError
from aeon.application.runs.queued import QueuedRuns, ordered_id


class Queue:
    def __init__(self) -> None:
        self.got: list[tuple[str, str, dict[str, Any]]] = []

    def submit(self, run_id: str, request: str, *, overrides: Mapping[str, Any], thread: object = None) -> None:
        self.got.append((run_id, request, dict(overrides)))


def test_a_request_with_allowed_options_is_queued_as_their_overrides() -> None:
    queue, told = Queue(), []
    runs = QueuedRuns(queue, ("ttl", "max_cost"), new_id=lambda: "r1", queued=told.append)

    assert runs.submit("sum 5 and 10", {"ttl": 2, "max_cost": 0.5}) == "r1"
    assert queue.got == [("r1", "sum 5 and 10", {"run.ttl": 2, "run.ttl_given": True, "run.max_cost": 0.5})]
    assert told == ["r1"]


@pytest.mark.parametrize(
    ("request_", "options", "says"),
    [
        ("x", {"tools": ["shell"]}, "'tools' may not be set by a client of this server (it allows: max_cost, ttl)"),
        ("x", {"max_llm_calls": 3}, "'max_llm_calls' may not be set"),
        ("x", {"ttl": -1}, "'ttl': Input should be greater than or equal to 0"),
        ("x", {"ttl": "many"}, "'ttl': Input should be a valid integer"),
        ("   ", {}, "the request is empty"),
        (None, {}, "'request' must be a string"),
    ],
)
def test_what_does_not_fit_is_refused_naming_it_and_nothing_is_queued(
    request_: Any, options: dict[str, Any], says: str
) -> None:
    queue = Queue()
    with pytest.raises(InputError) as refused:
        QueuedRuns(queue, ("ttl", "max_cost")).submit(request_, options)
    assert says in str(refused.value) and queue.got == []


def test_run_ids_made_one_after_another_sort_in_that_order() -> None:
    made = [ordered_id() for _ in range(200)]
    assert made == sorted(made) and len(set(made)) == 200
