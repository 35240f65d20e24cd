"""Advisories travel as one tagged union: each comes back from JSON as the type it was, told apart by `kind`."""

from __future__ import annotations

import msgspec
import pytest

from aeon.domain.advisories import (
    Advisory,
    FollowUpQuestion,
    ManualIntervention,
    ProfileClamped,
    RefinementFailed,
    RefinementRejected,
    RepairConflict,
)

EVERY_KIND = [
    FollowUpQuestion(pass_number=1, step_id="s2", question="which currency?"),
    ManualIntervention(pass_number=2, step_id="s3", reason="too deep", max_depth=3),
    RefinementRejected(pass_number=1, step_id="s1", reason="already ran"),
    RefinementFailed(pass_number=2, detail="not JSON"),
    RepairConflict(
        pass_number=1, step_id="s1", validator_repair={"action": "x"}, issue_id="V1", planner_action="modify"
    ),
    ProfileClamped(pass_number=2, reason="depth 5 clamped to 3"),
]


@pytest.mark.parametrize("advisory", EVERY_KIND, ids=lambda a: a.kind)
def test_each_advisory_round_trips_through_json_as_its_own_type(advisory):
    data = msgspec.json.encode(advisory)
    assert msgspec.json.decode(data)["kind"] == advisory.kind
    assert msgspec.json.decode(data, type=Advisory) == advisory


def test_every_kind_has_its_own_tag():
    assert len({a.kind for a in EVERY_KIND}) == len(EVERY_KIND)


def test_an_unknown_kind_is_refused_not_guessed():
    with pytest.raises(msgspec.ValidationError, match="kind"):
        msgspec.json.decode(b'{"kind": "shrug", "pass_number": 1}', type=Advisory)


def test_a_repair_conflict_says_the_planner_won():
    assert "planner refinement applied" in EVERY_KIND[4].resolution  # type: ignore[union-attr]
