"""Advisories: what a run noticed and recorded without stopping, as one tagged union (written with a `kind` field)."""

from __future__ import annotations

from typing import Any

import msgspec


class _Advisory(msgspec.Struct, kw_only=True, tag_field="kind"):
    pass_number: int

    @property
    def kind(self) -> str:
        return str(self.__struct_config__.tag)


class FollowUpQuestion(_Advisory, tag="follow_up_question"):
    """An ambiguous or blocked fragment: what is missing to carry it out."""

    step_id: str
    question: str


class ManualIntervention(_Advisory, tag="manual_intervention"):
    """A fragment decomposed past the depth cap: refinement stops for it, a human should look."""

    step_id: str
    reason: str
    max_depth: int


class RefinementRejected(_Advisory, tag="refinement_rejected"):
    step_id: str
    reason: str


class RefinementFailed(_Advisory, tag="refinement_failed"):
    """The refiner's answer could not be used; the plan is kept as it was."""

    detail: str


class RepairConflict(_Advisory, tag="repair_conflict"):
    """A validator repair and an applied refinement aimed at the same step: the planner won."""

    step_id: str
    validator_repair: dict[str, Any]
    issue_id: str
    planner_action: str
    resolution: str = "planner refinement applied; validator repair recorded as advisory"


class ProfileClamped(_Advisory, tag="profile_clamped"):
    """A re-inferred profile moved more than one tier and was held back (tier stability)."""

    reason: str


Advisory = (
    FollowUpQuestion | ManualIntervention | RefinementRejected | RefinementFailed | RepairConflict | ProfileClamped
)
