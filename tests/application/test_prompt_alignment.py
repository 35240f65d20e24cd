"""Prompt context alignment (STYLE rule 11, 05 US3): real runs render every prompt with real context."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from typing import Any

import pytest

from aeon.adapters.llm.scripted import ScriptedRequest
from aeon.application.llm.prompts import PromptTemplate, evaluation, templates

from harness import SUM_STEP, document, plan_json, run
from multipass import add_step, profile, refine, verdict

ALL = (*templates.ALL, *evaluation.ALL)
BY_NAME = {t.name: t for t in ALL}
REQUESTS = ("calculate the sum of 5 and 10", "please add ten to five and tell me the total")
ADDER_STEP = {"step_id": "s1", "description": "Add 5 and 10", "tool": "adder", "args": {"a": 5, "b": 10}}
Rendered = list[tuple[str, dict[str, Any], str]]


def every_prompt_script() -> list[str]:
    """profile, plan (not JSON → repair_json), missing tool (→ repair_step), evaluate, refine, reason."""
    return [
        profile(3),
        "Sure! I would first add the numbers.",  # plan: not JSON
        plan_json(ADDER_STEP),  # repair_json answer: valid, but names an unregistered tool
        json.dumps(SUM_STEP),  # repair_step answer
        verdict(False),
        refine(add_step("s2", "State the sum from s1", agent="llm")),
        "The sum is 15.",  # reason
        verdict(True),
    ]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Rendered, list[ScriptedRequest]]]:
    """Every render and every request sent in both runs (one per request), keyed by request."""
    out: dict[str, tuple[Rendered, list[ScriptedRequest]]] = {}
    original = PromptTemplate.render
    with pytest.MonkeyPatch.context() as mp:
        for request in REQUESTS:
            seen: Rendered = []

            def spy(self: PromptTemplate, values: Mapping[str, str], seen: Rendered = seen) -> str:
                text = original(self, values)
                seen.append((self.name, dict(values), text))
                return text

            mp.setattr(PromptTemplate, "render", spy)
            r = run(tmp_path_factory.mktemp("prompts"), every_prompt_script(), request=request, evaluate=True, ttl=3)
            assert r.result.status == "completed" and r.result.passes == 2, r.result.error
            assert (
                document(r.result)["counts"]["llm_repairs"] == 2 and document(r.result)["counts"]["tool_repairs"] == 1
            )
            texts = {text for _, _, text in seen}
            assert all(req.messages[-1].content in texts for req in r.llm.requests)  # every call is a template
            out[request] = (seen, r.llm.requests)
    return out


@pytest.fixture(scope="module")
def renders(runs: dict[str, tuple[Rendered, list[ScriptedRequest]]]) -> dict[str, Rendered]:
    return {request: seen for request, (seen, _) in runs.items()}


def test_the_runs_render_every_template(renders):
    for seen in renders.values():
        assert {name for name, _, _ in seen} == set(BY_NAME)


def test_no_slot_is_ever_null_empty_or_a_stringified_none(renders):
    for seen in renders.values():
        for name, values, _ in seen:
            for slot in BY_NAME[name].slots:
                value = values.get(slot)
                assert value is not None, (name, slot)
                assert str(value).strip() not in ("", "None", "null", "none", "{}", "[]"), (name, slot, value)


def test_every_value_passed_to_a_template_is_one_of_its_slots(renders):
    """No key populated for nothing, no slot left to chance."""
    for seen in renders.values():
        for name, values, _ in seen:
            assert set(values) == BY_NAME[name].slots, name


def test_the_request_slot_is_the_original_input_verbatim(renders):
    for request, seen in renders.items():
        for name, values, _ in seen:
            if "request" in values:
                assert values["request"] == request, name


def test_the_profile_slot_carries_the_inferred_profile_not_a_placeholder(renders):
    for seen in renders.values():
        for name, values, _ in seen:
            if "profile" in values:
                assert "depth 3 task" in values["profile"] and "depth 3/5" in values["profile"], name


def test_the_tool_list_is_one_identical_block_across_all_prompts(renders):
    blocks = {values["tools"] for seen in renders.values() for _, values, _ in seen if "tools" in values}
    (block,) = blocks
    assert "calculator" in block and "input_schema" in block


def test_evaluation_prompts_see_the_executed_outputs_and_the_final_answer(renders):
    seen = renders[REQUESTS[0]]
    validates = [v for n, v, _ in seen if n == "evaluate"]
    assert [v["answer"] for v in validates] == ["15", "The sum is 15."]
    assert "output: 15" in validates[0]["plan"]
    refine_values = next(v for n, v, _ in seen if n == "refine")
    assert "incomplete" in refine_values["problems"] and "s1 [complete]" in refine_values["plan"]
    reason = next(v for n, v, _ in seen if n == "reason")
    assert '"output": 15' in reason["memory"]  # the earlier step's result, not "(none yet)"


def _static_prefix(template: PromptTemplate) -> tuple[str, str]:
    """(text before the first slot that changes per call, the rest); `tools` is fixed for a run."""
    for m in string.Template.pattern.finditer(template.text):
        name = m.group("named") or m.group("braced")
        if name and name != "tools":
            return template.text[: m.start()], template.text[m.start() :]
    return template.text, ""


@pytest.mark.parametrize("template", ALL, ids=lambda t: t.name)
def test_the_static_part_of_every_prompt_comes_before_its_per_call_slots(template):
    """Prefix stability for a provider's KV/prompt cache: instructions and examples first, slots last."""
    prefix, tail = _static_prefix(template)
    assert len(prefix.strip()) > 100, template.name  # the instructions (and examples) open the prompt
    for line in tail.splitlines():
        label = re.sub(r"\$\{\w+\}|\$\w+", "", line)
        assert len(label) <= 20, (template.name, line)  # only short labels between the trailing slots


def test_every_rendered_prompt_starts_with_the_same_static_prefix_whatever_the_request(renders):
    first, second = (renders[r] for r in REQUESTS)
    (tools,) = {v["tools"] for seen in (first, second) for _, v, _ in seen if "tools" in v}  # fixed for a run
    for name, template in BY_NAME.items():
        prefix, _ = _static_prefix(template)
        rendered = [text for seen in (first, second) for n, _, text in seen if n == name]
        expected = string.Template(prefix).safe_substitute(tools=tools)
        assert len(rendered) >= 2, name
        for text in rendered:
            assert text.startswith(expected), name
    # and the requests really differ where the request slot is
    plan_a = next(t for n, _, t in first if n == "plan")
    plan_b = next(t for n, _, t in second if n == "plan")
    assert plan_a != plan_b and plan_a.endswith(f"Request: {REQUESTS[0]}\nPlan:")


def test_every_llm_call_opens_with_the_same_messages_before_its_own_prompt(runs):
    """Prefix stability at the message level: whatever precedes the per-call prompt is identical on every call."""
    heads = {tuple((m.role, m.content) for m in req.messages[:-1]) for _, requests in runs.values() for req in requests}
    assert len(heads) == 1
    (head,) = heads
    if head:  # a shared preamble, when there is one, carries the tool list
        assert "calculator" in head[0][1]
