"""Live progress on stderr: every progress event type is shown, dispatched by its type; a quiet display (`--json`)
leaves out the LLM calls and supervisor actions."""

from __future__ import annotations

import io

import pytest

from aeon.adapters.console import ConsoleProgress
from aeon.domain.phases import Phase
from aeon.domain.progress import (
    LLMCallEnded,
    LLMCallStarted,
    PhaseEnded,
    PrefixUncached,
    ProgressEvent,
    SupervisorActed,
)

from progress_samples import SAMPLES

DETAIL = (LLMCallStarted, LLMCallEnded, SupervisorActed, PrefixUncached)


def shown(event: ProgressEvent, *, verbose: bool = True) -> list[str]:
    out = io.StringIO()
    ConsoleProgress(out, verbose=verbose).update(event)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).__name__)
def test_every_event_type_is_shown_on_its_own_line(event: ProgressEvent) -> None:
    lines = shown(event)
    assert lines and all(line.strip() for line in lines)


SHOWN = [
    "── pass 2 · B",
    "  phase B of pass 2: expired after 1.2 s",
    "plan: add then explain (2 steps)",
    '  1. [s1] add — tool calculator {"expression": "5 + 10"}',
    "  2. [s2] explain s1 — agent llm",
    "▶ [1/2] s1: add",
    '✓ s1 complete (tool): {"sum": 15}',
    "⊘ s2 invalid (-): Tool 'adder' not found in registry",
    '↻ s1 repaired: now calls calculator {"expression": "5 + 10"}',
    "⤷ s2 could not be repaired: falling back to LLM reasoning",
    "  prompt prefix ~180 tokens, under the 1,024 that openai caches: not cached",
    "  … LLM execute_step:s2 (EXECUTE · step s2)",
    "  … 42 tokens at 21.5 tok/s",
    "  … failed: AEON.LLM.UNAVAILABLE",
    "⏳ provider still unavailable after 3 attempts (HTTP 429): one more round for plan in 12.0 s",
    "  supervisor llm_repair on plan (ok): fixed JSON",
    "  evaluation: not converged: incomplete (step s2 failed) · model's scores: completeness 0.50, coherence 0.90",
    "  refinement: 1 change applied, 1 rejected",
    "  advisory follow_up_question s2: which currency?",
    "  advisory repair_conflict s1: planner refinement applied; validator repair recorded as advisory",
    "  advisory refinement_failed : ",
    "  depth decision: continue — not converged, budget left",
    "⚠ step s2: tool 'adder' was not called",
    '✋ s1 waits for approval: send {"text": "a"}',
    "  s1 approved with edited arguments by ana",
]


def test_the_lines_say_what_happened_in_words() -> None:
    assert [line for e in SAMPLES for line in shown(e)] == SHOWN


def test_a_quiet_display_leaves_out_llm_calls_and_supervisor_actions() -> None:
    for event in SAMPLES:
        assert bool(shown(event, verbose=False)) is not isinstance(event, DETAIL), event


def test_a_phase_that_ended_well_adds_no_line_the_next_phase_says_it_went_on() -> None:
    assert shown(PhaseEnded(phase=Phase.A, pass_number=1, outcome="success", duration_seconds=0.5)) == []
