"""Task profiles: the ranges a profile must keep, and a re-inferred depth that moves at most one tier at a time."""

from __future__ import annotations

import msgspec
import pytest

from aeon.domain.profile import Breadth, Confidence, TaskProfile, ToolUsage, stabilize


def profile(depth: int = 2, sufficiency: float = 0.8, inference: str = "two numbers to add") -> TaskProfile:
    return TaskProfile(
        profile_version=1,
        reasoning_depth=depth,
        information_sufficiency=sufficiency,
        expected_tool_usage=ToolUsage.MINIMAL,
        output_breadth=Breadth.NARROW,
        confidence_requirement=Confidence.HIGH,
        raw_inference=inference,
    )


def test_a_profile_within_its_ranges_has_no_problems():
    assert profile(depth=1, sufficiency=0.0).problems() == [] and profile(depth=5, sufficiency=1.0).problems() == []


def test_every_out_of_range_field_is_named():
    assert profile(depth=6, sufficiency=1.5, inference="  ").problems() == [
        "reasoning_depth 6 is outside 1..5",
        "information_sufficiency 1.5 is outside 0.0..1.0",
        "raw_inference is empty",
    ]


def test_the_first_profile_is_taken_as_inferred():
    first = profile(depth=5)
    assert stabilize(first, None) == (first, None)


@pytest.mark.parametrize(("previous", "new"), [(2, 3), (3, 2), (3, 3)])
def test_a_depth_within_one_tier_of_the_previous_is_kept(previous, new):
    assert stabilize(profile(depth=new), profile(depth=previous)) == (profile(depth=new), None)


@pytest.mark.parametrize(("previous", "new", "kept"), [(1, 5, 2), (5, 1, 4), (2, 4, 3)])
def test_a_jump_of_more_than_one_tier_is_clamped_and_says_so(previous, new, kept):
    used, note = stabilize(profile(depth=new), profile(depth=previous))
    assert used == msgspec.structs.replace(profile(depth=new), reasoning_depth=kept)
    assert note == f"reasoning_depth {new} clamped to {kept}: within one tier of the previous {previous}"
