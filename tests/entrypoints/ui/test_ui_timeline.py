"""A run's timeline and plan changes as `aeon ui` draws them, from the records of real scripted runs: passes, phases,
the kind of every step (tool, LLM, subplan, denied …) placed on the run's clock, and the plan's diff."""

from __future__ import annotations

import json
from pathlib import Path

from durable_harness import aeon
from ui_harness import CONFIG

from aeon.application.views.passes import diff
from aeon.application.views.timeline import build
from aeon.domain.audit_log import ReadRecord, decode_record


def _records(tmp_path: Path, request: str, config: str) -> list[ReadRecord]:
    log = tmp_path / "log.jsonl"
    done = aeon(tmp_path, "run", request, "--config", CONFIG / config, "--no-durable", "--log-file", log, "-q")
    assert done.returncode == 0, done.stderr
    return [decode_record(line) for line in log.read_text().splitlines()]


def test_a_subplan_run_shows_its_passes_phases_and_the_substeps_as_subplan_steps(tmp_path: Path) -> None:
    records = _records(tmp_path, "add 5 and 10 and explain whether it is odd", "scripted-subplan.yaml")

    line = build(records)

    assert [p.number for p in line.passes] == [1, 2]
    assert [ph.letter for ph in line.passes[0].phases] == ["A", "B", "C", "D"]
    steps = [i for p in line.passes for ph in p.phases for i in ph.items if i.kind == "step"]
    assert [(s.label.split(" · ")[:2], s.step_kind) for s in steps] == [
        (["step s1", "complete"], "tool"),
        (["step s2", "invalid"], "llm"),  # blocked, then decomposed
        (["step s2.1", "complete"], "subplan"),
        (["step s2.2", "complete"], "subplan"),
    ]
    refinement = next(i for ph in line.passes[0].phases for i in ph.items if i.kind == "refinement")
    assert refinement.label.startswith("refinement SUBPLAN_CREATE s2: applied — s2 is too broad")
    assert [i.label for i in line.ending] == ["run ended: completed"]
    every = [i for p in line.passes for ph in p.phases for i in ph.items]
    assert all(0 <= i.start <= line.total and (i.seconds or 0) <= line.total + 1e-3 for i in every)
    assert sum(1 for i in line.llm_calls if i.facts["purpose"] == "evaluate") == 2


def test_the_plan_diff_names_added_changed_kept_and_removed_steps() -> None:
    before = [
        {"step_id": "s1", "description": "Add", "tool": "calculator", "args": {"expression": "5 + 10"}},
        {"step_id": "s2", "description": "Say it", "agent": "llm"},
        {"step_id": "s3", "description": "Check", "tool": "echo", "args": {"text": "a"}},
    ]
    after = [
        {"step_id": "s1", "description": "Add", "tool": "calculator", "args": {"expression": "5 + 10"}},
        {"step_id": "s3", "description": "Check", "tool": "echo", "args": {"text": "b"}},
        {"step_id": "s4", "description": "State the sum", "agent": "llm"},
    ]

    changes = diff(before, after)

    assert [(c.step_id, c.change) for c in changes] == [
        ("s1", "kept"), ("s3", "changed"), ("s4", "added"), ("s2", "removed")
    ]  # fmt: skip
    assert changes[1].was == {"args": {"text": "a"}} and changes[1].now == {"args": {"text": "b"}}


def test_advisories_and_a_skipped_refinement_say_what_they_were_about(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    config = CONFIG / "scripted-deep-nesting.yaml"
    done = aeon(tmp_path, "run", "reason about it", "--config", config, "--no-durable", "--log-file", log, "-q")
    assert done.returncode == 3, done.stderr

    line = build([decode_record(text) for text in log.read_text().splitlines()])

    advisories = [i.label for i in line.warnings if i.fields.get("kind") == "manual_intervention"]
    assert advisories and all("exceeds maximum 5" in a and " step s1." in a for a in advisories)
    assert not [i.label for i in line.warnings if i.label in ("advisory", "llm giveup")]
    every = [i for p in line.passes for ph in p.phases for i in ph.items]
    (skipped,) = [i for i in every if i.label.startswith("refinement skipped")]
    assert skipped.kind == "refinement" and "(cap ttl): no pass can follow" in skipped.label


def test_a_clipped_prompt_and_a_call_given_up_say_what_happened(tmp_path: Path) -> None:
    """A plan whose LLM step reads a long tool output, on a small context window, against a provider that refuses
    connections: the step's prompt is clipped, then its call is given up."""
    steps = [
        {"step_id": "s1", "description": "Echo it", "tool": "echo", "args": {"text": "word " * 4000}},
        {"step_id": "s2", "description": "Summarise s1", "agent": "llm"},
    ]
    (tmp_path / "plan.json").write_text(json.dumps({"goal": "g", "steps": steps}))
    llm = {"adapter": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "x", "max_attempts": 1}
    llm |= {"context_window": 1024, "max_tokens": 256}
    (tmp_path / "c.json").write_text(json.dumps({"llm": llm, "run": {"max_seconds": 1, "evaluate": False}}))
    log = tmp_path / "log.jsonl"
    done = aeon(tmp_path, "run", "sum", "--plan", "plan.json", "--config", "c.json", "--no-durable", "--log-file", log)
    assert done.returncode == 3, done.stderr

    said = [i.label for i in build([decode_record(t) for t in log.read_text().splitlines()]).warnings]

    assert any(w.startswith("the prompt for reason:s2 clipped") and " s1 (0 of 20,036 characters" in w for w in said), (
        said
    )
    assert any(
        w == "LLM call gave up after 1 attempt: connection refused at http://127.0.0.1:9/v1/chat/completions"
        for w in said
    ), said


def test_a_log_written_before_the_records_were_typed_still_makes_its_timeline() -> None:
    old = Path(__file__).resolve().parents[2] / "corpus" / "log-written-by-3a2520f.jsonl"
    records = [decode_record(line) for line in old.read_bytes().splitlines()]
    first_run = [r for r in records if r.correlation_id == records[0].correlation_id]  # the two-pass demo

    line = build(first_run)

    assert [p.number for p in line.passes] == [1, 2]
    assert [ph.letter for ph in line.passes[0].phases] == ["A", "B", "C", "D"]
    assert len(line.llm_calls) == 5
    assert [i.label for i in line.ending] == ["run ended: completed"]
