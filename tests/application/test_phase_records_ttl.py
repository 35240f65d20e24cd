"""Phase entry and exit records carry the state before the phase and the TTL as it really was.

The run is multipass.two_pass_script(): pass 1 profiles, plans, runs s1, fails convergence and adds s2; pass 2 runs
s2 and converges. The profile (depth 3, sufficiency 0.6, moderate breadth, medium confidence) scores 4.8, "high"
complexity, which wants 4 passes: phase A allocates min(4, run.ttl). TTL is decremented once per completed cycle,
after phase D exits, so pass 2 starts with one less.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness import FinishedRun, run
from multipass import two_pass_script

PHASES = [("A", 1), ("B", 1), ("C", 1), ("D", 1), ("B", 2), ("C", 2), ("D", 2)]


def boundary(r: FinishedRun, event: str) -> list[dict[str, Any]]:
    return [x for x in r.records() if x["event"] == event]


def steps(state: dict[str, Any]) -> list[tuple[str, str]] | None:
    plan = state["plan_state"]
    return None if plan is None else [(s["step_id"], s["status"]) for s in plan["steps"]]


@pytest.mark.parametrize(
    ("ttl", "allocated", "entry", "exit_"),
    [
        # run.ttl 5: the profile's 4 passes fit. Phase A enters with the configured 5 and leaves with the 4 it
        # allocated; pass 1 runs on 4, pass 2 on 3.
        (5, 4, [5, 4, 4, 4, 3, 3, 3], [4, 4, 4, 4, 3, 3, 3]),
        # run.ttl 3 caps the allocation at 3: pass 1 runs on 3, pass 2 on 2.
        (3, 3, [3, 3, 3, 3, 2, 2, 2], [3, 3, 3, 3, 2, 2, 2]),
    ],
    ids=["ttl5-allocates-4", "ttl3-capped"],
)
def test_every_phase_boundary_records_the_ttl_the_budget_held_at_that_moment(tmp_path, ttl, allocated, entry, exit_):
    r = run(tmp_path, two_pass_script(), evaluate=True, ttl=ttl)
    assert r.result.status == "completed" and r.result.passes == 2
    [alloc] = boundary(r, "ttl_allocated")
    assert alloc["allocated_ttl"] == allocated and alloc["detected_complexity"] == "high"

    entries, exits = boundary(r, "phase_entry"), boundary(r, "phase_exit")
    assert [(x["phase"], x["pass_number"]) for x in entries] == PHASES
    assert [(x["phase"], x["pass_number"]) for x in exits] == PHASES
    assert [x["ttl_snapshot"] for x in entries] == [{"ttl_before": n, "ttl_at_boundary": n} for n in entry]
    assert [x["ttl_snapshot"] for x in exits] == [
        {"ttl_before": before, "ttl_after": after, "ttl_at_boundary": after}
        for before, after in zip(entry, exit_, strict=True)
    ]
    # the snapshot agrees with the state the record carries, on entry and on exit
    assert [x["state_before"]["ttl_remaining"] for x in entries] == entry
    assert [x["state_after"]["ttl_remaining"] for x in exits] == exit_
    # and with what the rest of the run reports: each pass's TTL, and one decrement per completed cycle
    assert [p.ttl_remaining for p in r.result.history.passes] == [allocated, allocated - 1]
    assert r.result.budget.ttl_remaining == allocated - 2


def test_each_phase_entry_carries_the_plan_ttl_and_phase_state_from_before_the_phase(tmp_path):
    r = run(tmp_path, two_pass_script(), evaluate=True, ttl=5)
    entries = boundary(r, "phase_entry")
    for x in entries:
        assert set(x["state_before"]) == {"plan_state", "ttl_remaining", "phase_state"}
        assert x["state_before"]["phase_state"]["pass_number"] == x["pass_number"]
    assert [steps(x["state_before"]) for x in entries] == [
        None,  # A, pass 1: no plan yet
        [("s1", "pending")],  # B: the plan phase A made
        [("s1", "pending")],  # C: validated, not run
        [("s1", "complete"), ("s2", "pending")],  # D: s1 ran, refinement added s2
        [("s1", "complete"), ("s2", "pending")],
        [("s1", "complete"), ("s2", "pending")],
        [("s1", "complete"), ("s2", "complete")],
    ]
    # the (sub-)phase context still set when the next phase begins
    assert [
        (x["state_before"]["phase_state"]["context"], x["state_before"]["phase_state"]["pass_phase"]) for x in entries
    ] == [
        ("A", "PLAN"),
        ("A", "PLAN"),
        ("B", "PLAN"),
        ("C3", "REFINE"),
        ("D", "EVALUATE"),  # phase D's decision belongs to the pass's evaluation
        ("B", "PLAN"),
        ("C2", "EVALUATE"),
    ]
    assert [x["transition"] for x in entries] == ["A->B", "B->C", "C->D", "D->A/B", "B->C", "C->D", "D->A/B"]


def test_each_phase_exit_repeats_the_entry_state_and_adds_the_state_after(tmp_path):
    r = run(tmp_path, two_pass_script(), evaluate=True, ttl=5)
    entries, exits = boundary(r, "phase_entry"), boundary(r, "phase_exit")
    for entry, exit_ in zip(entries, exits, strict=True):
        assert exit_["state_before"] == entry["state_before"]
        assert exit_["ttl_snapshot"]["ttl_before"] == entry["ttl_snapshot"]["ttl_before"]
        assert exit_["outcome"] == "success"
    assert [steps(x["state_after"]) for x in exits] == [
        [("s1", "pending")],
        [("s1", "pending")],
        [("s1", "complete"), ("s2", "pending")],
        [("s1", "complete"), ("s2", "pending")],
        [("s1", "complete"), ("s2", "pending")],
        [("s1", "complete"), ("s2", "complete")],
        [("s1", "complete"), ("s2", "complete")],
    ]
