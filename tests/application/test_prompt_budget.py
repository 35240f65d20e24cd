"""The prompt budget (application/llm/prompt_budget.py): a tool's output reaches the later prompts whole — the reasoning
step that uses it, the evaluation, the refinement — while the model's context window holds it; what it cannot hold is
clipped fairly, said in the prompt, and put on the record naming the call."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aeon import testing
from aeon.adapters.tools.builtin import register_builtins
from aeon.adapters.tools.decorator import tool
from aeon.adapters.tools.registry import ToolRegistry
from aeon.application.kernel.run import RunSettings
from aeon.application.llm.prompt_budget import (
    DEFAULT_CONTEXT_WINDOW,
    Part,
    context_window,
    estimate_tokens,
    fit,
    shares,
)
from aeon.application.results import RunStatus
from aeon.domain.llm import ModelInfo
from aeon.domain.provenance import fence

from multipass import add_step, first, profile, refine, verdict

READ = {"step_id": "s1", "description": "Read the report", "tool": "read_report", "args": {"name": "q3"}}
SUMMARISE = {"step_id": "s2", "description": "Summarise the report from s1", "agent": "llm"}
RESERVE = 512  # RunSettings' llm.max_tokens left to the adapter: the budget keeps the base config's 512


def report(size: int) -> str:
    """`size` characters of a report: lines of sentences, as a file read by a tool would be."""
    line = "Revenue grew in every region; costs held. "
    lines, total, n = [], 0, 0
    while total < size:
        n += 1
        text = f"{n:06d} {line}\n" if n % 3 == 0 else f"{n:06d} {line}"
        lines.append(text)
        total += len(text)
    return "".join(lines)[: size - 1].rstrip().ljust(size - 1, "-") + "."  # `size` characters, no trailing space


def reading_tools(text: str) -> ToolRegistry:
    """The built-in tools and `read_report`, which returns `text` whatever report is named."""

    @tool
    def read_report(name: str) -> str:
        """The text of a named report."""
        return text

    registry = ToolRegistry()
    register_builtins(registry)
    registry.register_function(read_report)
    return registry


def run_reading(text: str, **settings: Any) -> tuple[Any, dict[str, list[testing.LLMCall]], testing.ListLog]:
    """Read `text` with a tool, summarise it (s2), fail the first evaluation, refine (add s3), converge on pass 2."""

    registry = reading_tools(text)
    step = {"answer": "Revenue grew.", "clarity_state": "CLEAR", "handoff_to_next": "revenue grew"}
    answers = iter(
        [
            first(profile(2), json.dumps({"goal": "summarise the q3 report", "steps": [READ, SUMMARISE]})),
            json.dumps(step),
            verdict(False),
            refine(add_step("s3", "List the figures of the report from s1", agent="llm")),
            json.dumps(step),
            verdict(True),
        ]
    )
    calls: dict[str, list[testing.LLMCall]] = {}

    def answer(call: testing.LLMCall) -> str:
        calls.setdefault(call.schema_name, []).append(call)
        return next(answers)

    log = testing.ListLog()
    run = RunSettings(ttl=2, ttl_given=True, **settings)
    orch = testing.orchestrator(testing.FunctionLLM(answer), run=run, tools=registry, log=log)
    result = asyncio.run(orch.run("summarise the q3 report"))
    assert result.status is RunStatus.COMPLETED and result.passes == 2, result.error
    return result, calls, log


def one_line(text: str) -> str:
    return " ".join(text.split())


def estimated(call: testing.LLMCall) -> int:
    """The request's tokens as the budget estimates them: every message, and the answer's reserve."""
    return sum(estimate_tokens(m.content) for m in call.messages) + RESERVE


# == whole while the window holds it ===================================================================================
def test_a_5000_character_tool_output_reaches_the_summarising_step_the_evaluation_and_the_refinement_whole():
    text = report(5_000)
    _, calls, log = run_reading(text)
    [reason, *_] = calls["step_result"]
    [evaluate, *_] = calls["evaluation"]
    [refinement] = calls["refinement"]
    assert json.dumps(text)[1:-1] in reason.prompt  # s1's entry under Earlier results, as its JSON text
    assert one_line(text) in evaluate.prompt and one_line(text) in refinement.prompt
    assert "[clipped:" not in reason.prompt + evaluate.prompt + refinement.prompt
    assert log.of("prompt_clipped") == []


def test_a_long_tool_output_is_handed_on_as_a_pointer_not_a_second_copy():
    text = report(5_000)
    result, calls, _ = run_reading(text)
    [s1, s2, _] = result.plan.steps
    assert s1.handoff_to_next == "s1 (read_report) returned 5,000 characters, shown under Earlier results"
    assert s2.incoming_context == s1.handoff_to_next
    assert calls["step_result"][0].prompt.count(json.dumps(text)[1:-1]) == 1


# == clipped to the budget, said in the prompt and on the record =======================================================
def test_a_1_mb_tool_output_is_clipped_to_the_budget_with_a_notice_in_the_prompt_and_a_record():
    text = report(1_000_000)
    _, calls, log = run_reading(text)
    sent = [c for kind in ("step_result", "evaluation", "refinement") for c in calls[kind]]
    for call in sent:
        [(shown, total)] = re.findall(r"\[clipped: ([\d,]+) of ([\d,]+) characters shown\]", call.prompt)
        assert int(shown.replace(",", "")) < 25_000 < 990_000 < int(total.replace(",", ""))
        assert estimated(call) <= DEFAULT_CONTEXT_WINDOW  # the whole request and the answer's reserve fit
        assert estimated(call) > DEFAULT_CONTEXT_WINDOW * 0.9  # and the budget is used, not wasted
    records = log.of("prompt_clipped")
    assert [r["purpose"] for r in records] == ["reason:s2", "evaluate", "refine", "reason:s3", "evaluate"]
    first_record = records[0]
    assert first_record["step_id"] == "s2" and first_record["context_window"] == DEFAULT_CONTEXT_WINDOW
    [clip] = first_record["clips"]
    assert clip["name"] == "s1" and clip["total"] > len(text)  # s1's entry: its JSON text
    assert 15_000 < clip["shown"] < 24_000
    assert f"[clipped: {clip['shown']:,} of {clip['total']:,} characters shown]" in calls["step_result"][0].prompt


def test_clipping_keeps_the_shared_prompt_prefix_byte_identical_on_every_call():
    _, calls, _ = run_reading(report(1_000_000))
    prefixes = {c.messages[0].content for kind in calls.values() for c in kind}
    assert len(prefixes) == 1 and all(len(c.messages) == 2 for kind in calls.values() for c in kind)


def test_a_smaller_configured_window_clips_sooner():
    text = report(5_000)
    _, calls, log = run_reading(text, context_window=2_600)  # room for the fixed text, each output's fence included
    assert "[clipped: " in calls["step_result"][0].prompt
    assert {r["context_window"] for r in log.of("prompt_clipped")} == {2_600}
    assert all(estimated(c) <= 2_600 for kind in calls.values() for c in kind)


# == the rules =========================================================================================================
def test_shares_are_max_min_fair_small_parts_whole_large_ones_split_equally():
    assert shares([100, 5_000, 40_000], 100_000) == [100, 5_000, 40_000]  # all fit: all whole
    assert shares([100, 5_000, 40_000], 10_100) == [100, 5_000, 5_000]
    assert shares([100, 40_000, 40_000], 10_100) == [100, 5_000, 5_000]
    assert shares([9, 9, 9], 10) == [4, 3, 3]  # the rounding remainder goes to the most relevant (first) part
    assert shares([10, 10], -5) == [0, 0]


def test_a_clipped_part_keeps_its_start_ends_with_a_notice_and_stays_within_its_share():
    texts, clips = fit([Part("s1", "é" * 3_000), Part("s2", "short")], 1_005)
    assert texts["s2"] == "short"
    shown, note = texts["s1"].split(" [clipped: ")
    assert set(shown) == {"é"} and note == f"{len(shown):,} of 3,000 characters shown]"
    assert len(texts["s1"].encode()) <= 1_000  # bytes: a character is never cut in half
    assert [(c.name, c.shown, c.total) for c in clips] == [("s1", len(shown), 3_000)]


@pytest.mark.parametrize(
    ("configured", "reported", "window"),
    [(None, None, DEFAULT_CONTEXT_WINDOW), (None, 200_000, 200_000), (4096, None, 4096)],
)
def test_the_window_is_the_configured_one_else_the_one_the_model_reports(configured, reported, window):
    info = ModelInfo(adapter="a", model="m", dialect="d", dialect_source="s", provider="p", context_window=reported)
    assert context_window(configured, info) == window


# == the README's figures ==============================================================================================
def test_the_readme_bench_command_prints_the_figures_it_quotes():
    """README "What the model sees of earlier steps": the command as written, and its 5,000-character figures."""
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    command = ".venv/bin/python bench/prompt_budget.py --quick"
    assert command in readme and "| the step that summarises it | 199 | 5,000 |" in readme
    out = subprocess.run(
        [sys.executable, *command.split()[1:]], cwd=root, capture_output=True, text=True, timeout=120, check=True
    ).stdout
    for kind in ("reason", "evaluate", "refine"):
        assert re.search(rf"{kind} +prompt: +5,000 of 5,000 characters", out), out
        assert re.search(rf"{kind} +prompt: +1\d,\d{{3}} of 1,000,000 characters", out), out
    assert "prompt_clipped reason:s2: s1 " in out


def test_a_long_final_answer_is_shown_to_the_evaluation_once():
    text = report(5_000)

    registry = reading_tools(text)
    llm = testing.answers(first(profile(1), json.dumps({"goal": "read the q3 report", "steps": [READ]})), verdict(True))
    orch = testing.orchestrator(llm, run=RunSettings(ttl=1, ttl_given=True), tools=registry)
    result = asyncio.run(orch.run("read the q3 report"))
    assert result.status is RunStatus.COMPLETED, result.error
    evaluation = llm.calls[-1].prompt
    assert f"Final answer: {fence(text, 'the final answer')}" in evaluation
    assert evaluation.count(text[:100]) == 1  # not in the plan line too
    assert "| complete | output: (the final answer, below)" in evaluation
