"""The chat profile's prompts (prompts/chat.py), rendered in real runs: no worked examples, the answer's schema only
in the request (compacted), one-line tools, one shared prefix on every call; and the report of a prefix too short
for the provider's prompt cache."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.application.llm.prompts import PromptTemplate, chat, templates
from aeon.application.llm.prompts.profiles import BASE, CHAT, compact, prompt_set
from aeon.application.llm.prompts.tools import describe_tools_compact, signature
from aeon.domain.llm import ModelInfo
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.progress import PrefixUncached
from aeon.domain.tools import ToolSpec

from harness import SUM_STEP, FinishedRun, plan_json, run, tool_specs
from multipass import add_step, first, profile, refine, verdict

REQUEST = "calculate the sum of 5 and 10"
ADDER_STEP = {"step_id": "s1", "description": "Add 5 and 10", "tool": "adder", "args": {"a": 5, "b": 10}}
KINDS = {t.name for t in chat.ALL if t is not chat.PREAMBLE}


def every_prompt_script() -> list[str]:
    """profile and plan (not JSON → repair_json; then an unregistered tool → repair_step), evaluate, refine, reason."""
    return [
        "Sure! I would first add the numbers.",
        first(profile(3), plan_json(ADDER_STEP)),
        json.dumps(SUM_STEP),
        verdict(False),
        refine(add_step("s2", "State the sum from s1", agent="llm")),
        "The sum is 15.",
        verdict(True),
    ]


def chat_llm(responses: list[str], cache_min_tokens: int | None = None) -> ScriptedLLM:
    class Chat(ScriptedLLM):
        def describe(self) -> ModelInfo:
            info = super().describe()
            return ModelInfo(
                **{**{f: getattr(info, f) for f in info.__struct_fields__}, "cache_min_tokens": cache_min_tokens}
            )

    return Chat(responses, source="test-script", profile="chat")


@pytest.fixture(scope="module")
def chat_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[tuple[str, dict[str, str]]], list[FinishedRun]]:
    """The renders and the runs: a two-pass run asking every kind but the re-profiling and the plan alone, a run with a
    given plan (its profile asked alone), a run without evaluation (the plan asked alone); all on a chat model."""
    seen: list[tuple[str, dict[str, str]]] = []
    original = PromptTemplate.render

    def spy(self: PromptTemplate, values: Mapping[str, str]) -> str:
        seen.append((self.name, dict(values)))
        return original(self, values)

    given = Plan(
        goal=REQUEST,
        steps=[PlanStep(step_id="s1", description="Add 5 and 10", tool="calculator", args={"expression": "5 + 10"})],
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PromptTemplate, "render", spy)
        done = [
            run(tmp_path_factory.mktemp("chat"), [], llm=chat_llm(every_prompt_script()), evaluate=True, ttl=3),
            run(
                tmp_path_factory.mktemp("chat"),
                [],
                llm=chat_llm([profile(3), verdict(True)]),
                evaluate=True,
                plan=given,
            ),
            run(tmp_path_factory.mktemp("chat"), [], llm=chat_llm([plan_json(SUM_STEP)])),
        ]
    assert [r.result.status for r in done] == ["completed"] * 3, [r.result.error for r in done]
    return seen, done


def test_a_chat_model_s_runs_render_every_chat_prompt_kind_with_a_real_context(chat_runs) -> None:
    seen, _ = chat_runs
    assert {name for name, _ in seen} == KINDS | {"preamble"}
    by_name = {t.name: t for t in chat.ALL}
    for name, values in seen:  # render raised on an empty slot; no slot is a placeholder either
        for slot in by_name[name].slots:
            assert str(values[slot]).strip() not in ("", "None", "null", "{}", "[]"), (name, slot)


def test_every_call_of_a_chat_run_opens_with_one_prefix_the_tool_list_without_examples_or_schemas(chat_runs) -> None:
    _, done = chat_runs
    for r in done:
        prefixes = {q.messages[0].content for q in r.llm.requests}
        assert prefixes == {CHAT.shared_prefix(tool_specs(), evaluate=True)}  # the tool list alone, either mode
        (prefix,) = prefixes
        assert "calculator(expression: string) -> number" in prefix
        assert "{" not in prefix and "input_schema" not in prefix and "example" not in prefix


def test_a_chat_prompt_holds_no_worked_example_and_no_schema_in_prose(chat_runs) -> None:
    _, done = chat_runs
    for q in (q for r in done for q in r.llm.requests):
        asked = q.messages[-1].content
        assert q.schema is not None and q.schema == compact(q.schema)  # the schema goes in the request, compacted
        assert json.dumps(q.schema)[:40] not in asked and "Schema:" not in asked
        assert "reasoning_depth" not in asked and "completeness_score" not in asked, asked  # no field list in prose
        assert asked.count("Request:") <= 1  # the request itself, never an example's


@pytest.mark.parametrize("template", [t for t in chat.ALL if t is not chat.PREAMBLE], ids=lambda t: t.name)
def test_a_chat_template_is_a_sentence_or_two_of_instructions_and_no_example(template: PromptTemplate) -> None:
    assert len(template.guide) <= 200 and "{" not in template.guide and not template.stop
    base = next(t for t in (*templates.ALL, BASE.evaluate) if t.name == template.name)
    assert template.slots <= base.slots  # filled by the same callers as the base template


def test_the_base_set_is_today_s_templates_and_tools_profile_prompts_as_chat() -> None:
    assert BASE.kinds == (
        templates.PROFILE_AND_PLAN,
        templates.PLAN,
        BASE.evaluate,
        templates.PROFILE,
        templates.REASON,
        templates.REFINE,
        templates.REPAIR_STEP,
        templates.REPAIR_JSON,
    )
    assert prompt_set("base") is BASE and prompt_set("chat") is prompt_set("tools") is CHAT


def test_a_compact_schema_keeps_what_the_model_must_follow_and_drops_what_it_reads_for_nothing() -> None:
    schema: dict[str, Any] = {
        "title": "Step",
        "type": "object",
        "properties": {"description": {"type": "string", "minLength": 1, "description": "what the step does"}},
        "required": ["description"],
    }
    assert compact(schema) == {
        "type": "object",
        "properties": {"description": {"type": "string"}},
        "required": ["description"],
    }


def test_a_compact_tool_line_gives_the_signature_and_the_first_line_of_the_description() -> None:
    spec = ToolSpec(
        name="search",
        description="Search the web.\nReturns up to `limit` results, newest first.",
        input_schema={
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}, "mode": {"enum": ["a", "b"]}},
            "required": ["query"],
        },
        output_schema={"type": "array", "items": {"type": "string"}},
    )
    assert signature(spec) == 'search(query: string, limit?: integer, mode?: "a"|"b") -> string[]'
    assert describe_tools_compact([spec]) == f"- {signature(spec)}: Search the web."
    assert describe_tools_compact([]) == "(no tools are registered)"


def _simple(tmp_path, cache_min_tokens: int | None) -> FinishedRun:
    answers = [first(profile(1, sufficiency=1.0), plan_json(SUM_STEP)), verdict(True)]
    return run(tmp_path, [], llm=chat_llm(answers, cache_min_tokens), evaluate=True)


def test_a_prefix_under_the_provider_s_cache_minimum_is_reported_once_before_the_first_call(tmp_path) -> None:
    r = _simple(tmp_path, cache_min_tokens=1024)
    events = [rec["event"] for rec in r.records()]
    assert events.count("prefix_uncached") == 1
    assert events.index("run_start") < events.index("prefix_uncached") < events.index("llm_call")
    (said,) = [rec for rec in r.records() if rec["event"] == "prefix_uncached"]
    assert said["cache_min_tokens"] == 1024 and 0 < said["prefix_tokens"] < 1024 and said["profile"] == "chat"
    assert [e for e in r.progress.events if isinstance(e, PrefixUncached)] == [
        PrefixUncached(provider="scripted", prefix_tokens=said["prefix_tokens"], cache_min_tokens=1024)
    ]


@pytest.mark.parametrize("minimum", [None, 10])  # no minimum (llama-server), or a prefix long enough
def test_a_prefix_the_provider_caches_is_not_reported(tmp_path, minimum: int | None) -> None:
    r = _simple(tmp_path, cache_min_tokens=minimum)
    assert r.result.status == "completed"
    assert all(rec["event"] != "prefix_uncached" for rec in r.records())
