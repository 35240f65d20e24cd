"""Progress events are public values: every type is JSON as one tagged union, and back again unchanged."""

from __future__ import annotations

import json
from typing import get_args

import msgspec
import pytest

from aeon.domain.phases import Phase
from aeon.domain.progress import PhaseStarted, ProgressEvent

from progress_samples import SAMPLES


def test_the_samples_cover_every_progress_event_type() -> None:
    assert {type(e) for e in SAMPLES} == set(get_args(ProgressEvent))


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).__name__)
def test_each_progress_event_round_trips_through_json_as_the_tagged_union(event: ProgressEvent) -> None:
    encoded = msgspec.json.encode(event)
    assert json.loads(encoded)["type"] == type(event).__name__
    assert msgspec.json.decode(encoded, type=ProgressEvent) == event


def test_an_event_of_an_unknown_type_is_refused_with_a_clear_error() -> None:
    with pytest.raises(msgspec.ValidationError, match="Invalid value 'StepExploded'"):
        msgspec.json.decode(b'{"type": "StepExploded", "step_id": "s1"}', type=ProgressEvent)


def test_a_sent_event_cannot_be_changed() -> None:
    event = PhaseStarted(phase=Phase.A, pass_number=1)
    with pytest.raises(AttributeError):
        event.pass_number = 2  # type: ignore[misc]
