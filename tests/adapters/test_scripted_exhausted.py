"""A scripted model that runs out says which answer the run asked for next and shows a JSON example of it."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

import aeon
from aeon import testing
from aeon.adapters.llm.expected import answer_shape
from aeon.adapters.llm.scripted import ScriptedLLM
from aeon.application.errors import ScriptExhausted
from aeon.application.judges.evaluator import EVALUATION_SCHEMA
from aeon.application.judges.refiner import refinement_schema
from aeon.application.kernel.executor import REASON_SCHEMA
from aeon.application.llm.planner import profile_and_plan_schema
from aeon.application.llm.profiler import PROFILE_SCHEMA
from aeon.application.plans.validation import plan_schema
from aeon.application.schemas import schema_problems
from aeon.domain.llm import Message

pytestmark = pytest.mark.usefixtures("isolated_env")

PLAN = {"goal": "weather", "steps": [{"step_id": "s1", "description": "Look it up", "tool": "weather", "args": {}}]}


@aeon.tool
def weather(city: str = "Paris") -> str:
    """Today's weather for a city."""
    return f"sunny in {city}"


def shown_example(message: str) -> Any:
    """The JSON example at the end of the message (before the kernel's [A->B …] tag), decoded."""
    return json.loads(re.sub(r" \[[A-Z]->[A-Z] [A-Z_]+\]$", "", message).split("shaped like ", 1)[1])


def test_a_plan_alone_where_the_profile_and_plan_were_asked_for_is_named_with_the_shape_it_needed() -> None:
    llm = testing.answers(json.dumps(PLAN))

    result = aeon.run("what is the weather in Paris?", tools=[weather], model=llm)

    assert result.status is aeon.RunStatus.ERROR and result.error is not None
    message = result.error.message
    assert message.startswith(
        "the test model ran out of answers after 1 call: call 2 asks to repair answer 1, the task profile and plan, "
        "which did not fit its schema: answer 1 should be shaped like {"
    )
    example = shown_example(message)
    assert not schema_problems(example, llm.calls[0].schema or {})  # the example is an answer the call takes
    assert example["plan"]["steps"][0]["tool"] == "calculator"  # a tool step, with a registered tool


def test_the_evaluation_asked_for_after_the_first_pass_is_named_with_the_setting_that_skips_it() -> None:
    first = shown_example(str(expected_error("profile_and_plan", profile_and_plan_schema(["weather"], max_steps=8))))
    first["plan"] = PLAN
    llm = testing.answers(json.dumps(first))

    result = aeon.run("what is the weather in Paris?", tools=[weather], model=llm)

    assert result.error is not None
    message = result.error.message
    assert "call 2 asks for the evaluation of the pass (one after each pass; run.evaluate: false asks for none)" in (
        message
    )
    assert not schema_problems(shown_example(message), EVALUATION_SCHEMA)


def expected_error(schema_name: str, schema: dict[str, Any] | None) -> ScriptExhausted:
    """What a ScriptedLLM with no responses left raises for one call."""
    llm = ScriptedLLM([], source="answers.yaml")
    with pytest.raises(ScriptExhausted) as caught:
        asyncio.run(llm.complete([Message(role="user", content="…")], schema=schema, schema_name=schema_name))
    return caught.value


@pytest.mark.parametrize(
    ("schema_name", "schema", "kind"),
    [
        ("plan", plan_schema(["weather"]), "the plan"),
        ("task_profile", PROFILE_SCHEMA, "a revised task profile"),
        ("refinement", refinement_schema(["weather"]), "the refinement of the plan"),
        ("step_result", REASON_SCHEMA, "the answer of a reasoning step"),
    ],
)
def test_a_scripted_model_out_of_responses_names_the_answer_asked_for_and_an_example_that_fits(
    schema_name: str, schema: dict[str, Any], kind: str
) -> None:
    error = expected_error(schema_name, schema)
    assert str(error).startswith(
        f"scripted LLM answers.yaml ran out of responses after 0 calls: call 1 asks for {kind}"
    )
    example = shown_example(str(error))
    assert not schema_problems(example, schema)
    assert len(answer_shape(schema)) <= 400


def test_an_answer_without_a_schema_may_be_any_text() -> None:
    assert str(expected_error("answer", None)).endswith(
        "call 1 asks for an answer named 'answer', shaped like any text"
    )
