"""Prompt context alignment (STYLE rule 11, 05 US3): real runs render every prompt with real context."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pytest

from aeon.adapters.llm.scripted import ScriptedRequest
from aeon.application.llm.prompts import PromptTemplate, _slots, evaluation, layout, templates
from aeon.domain.plan import Plan, PlanStep
from aeon.domain.provenance import fence

from harness import SUM_STEP, FinishedRun, document, plan_json, run
from multipass import add_step, first, profile, refine, verdict

ALL = (*templates.ALL, *evaluation.ALL)
BY_NAME = {t.name: t for t in ALL}
KINDS = tuple(t for t in ALL if t is not templates.PREAMBLE)  # every prompt kind; the preamble opens the prefix
REQUESTS = ("calculate the sum of 5 and 10", "please add ten to five and tell me the total")
ADDER_STEP = {"step_id": "s1", "description": "Add 5 and 10", "tool": "adder", "args": {"a": 5, "b": 10}}
Rendered = list[tuple[str, dict[str, Any], str]]


def every_prompt_script() -> list[str]:
    """profile and plan (not JSON → repair_json; then an unregistered tool → repair_step), evaluate, refine, reason."""
    return [
        "Sure! I would first add the numbers.",  # profile and plan: not JSON
        first(profile(3), plan_json(ADDER_STEP)),  # repair_json answer: valid, but names an unregistered tool
        json.dumps(SUM_STEP),  # repair_step answer
        verdict(False),
        refine(add_step("s2", "State the sum from s1", agent="llm")),
        "The sum is 15.",  # reason
        verdict(True),
    ]


def _runs_of(tmp: pytest.TempPathFactory, request: str) -> list[tuple[bool, FinishedRun]]:
    """The multi-pass run above; a run with a given plan (its profile asked alone); one without evaluation (the plan
    asked alone)."""
    full = run(tmp.mktemp("prompts"), every_prompt_script(), request=request, evaluate=True, ttl=3)
    assert full.result.status == "completed" and full.result.passes == 2, full.result.error
    assert document(full.result)["counts"]["llm_repairs"] == 2 and document(full.result)["counts"]["tool_repairs"] == 1
    given = Plan(
        goal=request,
        steps=[PlanStep(step_id="s1", description="Add 5 and 10", tool="calculator", args={"expression": "5 + 10"})],
    )
    alone = run(tmp.mktemp("prompts"), [profile(3), verdict(True)], request=request, evaluate=True, plan=given)
    single = run(tmp.mktemp("prompts"), [plan_json(SUM_STEP)], request=request)
    for r in (alone, single):
        assert r.result.status == "completed", r.result.error
    return [(True, full), (True, alone), (False, single)]  # (run.evaluate, the run)


@pytest.fixture(scope="module")
def runs(
    _all: dict[str, tuple[Rendered, list[tuple[bool, FinishedRun]]]],
) -> dict[str, tuple[Rendered, list[ScriptedRequest]]]:
    """Every render and every request sent in the runs of each request, keyed by request."""
    return {request: (seen, [q for _, r in done for q in r.llm.requests]) for request, (seen, done) in _all.items()}


@pytest.fixture(scope="module")
def _all(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Rendered, list[tuple[bool, FinishedRun]]]]:
    out: dict[str, tuple[Rendered, list[tuple[bool, FinishedRun]]]] = {}
    original = PromptTemplate.render
    with pytest.MonkeyPatch.context() as mp:
        for request in REQUESTS:
            seen: Rendered = []

            def spy(self: PromptTemplate, values: Mapping[str, str], seen: Rendered = seen) -> str:
                text = original(self, values)
                seen.append((self.name, dict(values), text))
                return text

            mp.setattr(PromptTemplate, "render", spy)
            finished = _runs_of(tmp_path_factory, request)
            texts = {text for _, _, text in seen}
            assert all(q.messages[-1].content in texts for _, r in finished for q in r.llm.requests)  # all templates
            out[request] = (seen, finished)
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
    answers = [fence("15", "the final answer"), fence("The sum is 15.", "the final answer")]
    assert [v["answer"] for v in validates][:2] == answers  # the two passes of the first run
    assert f"output:\n{fence('15', 'step s1')}" in validates[0]["plan"]
    refine_values = next(v for n, v, _ in seen if n == "refine")
    assert "incomplete" in refine_values["problems"] and "s1 [complete]" in refine_values["plan"]
    reason = next(v for n, v, _ in seen if n == "reason")
    assert '"output": 15' in reason["memory"]  # the earlier step's result, not "(none yet)"


@pytest.mark.parametrize("template", KINDS, ids=lambda t: t.name)
def test_every_prompt_kind_is_a_static_guide_and_a_per_call_part_of_short_labels_and_slots(template):
    """The guide (instructions and examples) holds no slot; what changes per call is only labelled slots."""
    assert len(template.guide.strip()) > 100 and not _slots(template.guide), template.name
    for line in template.text.splitlines():
        label = re.sub(r"\$\{\w+\}|\$\w+", "", line)
        assert len(label) <= 20, (template.name, line)  # only short labels between the slots


def test_the_shared_prefix_holds_the_guides_of_the_kinds_every_pass_asks_for_after_the_tool_list():
    shared = {t.name for t in KINDS if t.shared}
    assert (
        {t.name for t in (*layout.EVALUATING, *layout.SINGLE_PASS)}
        == shared
        == {"profile_and_plan", "evaluate", "plan"}
    )
    for evaluate, kinds in ((True, layout.EVALUATING), (False, layout.SINGLE_PASS)):
        prefix = layout.shared_prefix("- calculator: TOOLS", evaluate=evaluate)
        assert prefix.startswith(templates.PREAMBLE.text.split("${tools}")[0])
        assert prefix.index("TOOLS") < min(prefix.index(t.guide) for t in kinds)
        assert all(prefix.count(t.guide) == (1 if t in kinds else 0) for t in KINDS)


def test_every_prompt_kind_rendered_with_a_real_context_opens_with_the_run_s_static_prefix(_all):
    """What a provider sees of each call (its messages, in order) starts with the run's one static prefix, byte for
    byte on every call whatever the kind and the request, holds the call's own guide exactly once, and ends with the
    kind's labelled slots."""
    for seen, finished in _all.values():
        kind_of = {text: name for name, _, text in seen}
        (tools,) = {v["tools"] for n, v, _ in seen if n == "preamble"}
        for evaluate, r in finished:
            prefix = layout.shared_prefix(tools, evaluate=evaluate)
            for q in r.llm.requests:
                name = kind_of[q.messages[-1].content]
                assert [m.role for m in q.messages] == ["system", "user"] and q.messages[0].content == prefix, name
                seen_by_provider = "\n\n".join(m.content for m in q.messages)
                assert seen_by_provider.count(BY_NAME[name].guide) == 1, name
                assert seen_by_provider.endswith(BY_NAME[name].text.splitlines()[-1]), name
    kinds = {kind_of_name for seen, _ in _all.values() for kind_of_name, _, _ in seen}
    assert kinds == set(BY_NAME)  # every kind was sent in these runs


def test_the_two_calls_of_a_simple_request_share_all_but_their_labelled_slots(tmp_path):
    """A simple request's two calls (profile and plan, evaluation) differ only after the shared prefix, which is most
    of what each call sends: a prompt cache serves nearly all of the second."""
    simple = first(profile(1, sufficiency=1.0, breadth="narrow", confidence="low"), plan_json(SUM_STEP))
    r = run(tmp_path, [simple, verdict(True)], request=REQUESTS[0], evaluate=True, ttl=3)
    assert r.result.status == "completed" and [q.schema_name for q in r.llm.requests] == [
        "profile_and_plan",
        "evaluation",
    ]
    one, two = (q.messages for q in r.llm.requests)
    assert one[:-1] == two[:-1] and len(one) == 2
    assert all(len(m[-1].content) * 3 < len(m[0].content) for m in (one, two))


def test_the_per_call_part_ends_with_the_label_its_guide_s_examples_answer_after(renders):
    for seen in renders.values():
        for name, _, text in seen:
            if name == "preamble":
                continue
            label = BY_NAME[name].text.splitlines()[-1]
            assert text.endswith(label) and f"\n{label} " in BY_NAME[name].guide, name
    first_call = next(t for n, _, t in renders[REQUESTS[0]] if n == "profile_and_plan")
    assert first_call == f"Request: {REQUESTS[0]}\nProfile and plan:"


def test_every_llm_call_opens_with_the_same_messages_before_its_own_prompt(_all):
    """Prefix stability at the message level: whatever precedes the per-call prompt is identical on every call of a
    run, and on every run of the same mode whatever its request."""
    for evaluate in (True, False):
        heads = {
            tuple((m.role, m.content) for m in q.messages[:-1])
            for _, finished in _all.values()
            for mode, r in finished
            if mode is evaluate
            for q in r.llm.requests
        }
        assert len(heads) == 1
        (head,) = heads
        assert "calculator" in head[0][1]  # the shared prefix carries the tool list
