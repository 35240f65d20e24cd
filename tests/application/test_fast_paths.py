"""The kernel's fast paths decide exactly what the slow checks they skip would decide."""

from __future__ import annotations

import enum
import json
from typing import Any

import jsonschema
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aeon.adapters.eventlog.shrink import LARGE, may_hold_large_text
from aeon.application.plans.validation import ToolResolver, _fits_plan_shape, plan_schema, structural_problems
from aeon.application.redaction import KELVIN, REDACTED, Redactor
from aeon.application.schemas import _fast_type, _message, as_text, schema_problems
from aeon.domain.plan import PlanStep
from aeon.domain.tools import ToolSpec

AN_ENUM_MEMBER = enum.Enum("Phase", {"PLAN": "PLAN"}).PLAN

_text = st.one_of(st.just(""), st.text(max_size=5))
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_step = st.dictionaries(
    st.sampled_from(["step_id", "description", "tool", "args", "agent", "dependencies", "provides", "other"]),
    st.one_of(_json, st.just("llm"), st.lists(st.text(max_size=3), max_size=12), st.dictionaries(_text, _json)),
    max_size=7,
)
_plan = st.fixed_dictionaries(
    {}, optional={"goal": st.one_of(_text, _json), "steps": st.one_of(st.lists(_step, max_size=4), _json)}
)


@settings(max_examples=400)
@given(plan=_plan, max_steps=st.integers(1, 4), goal=st.booleans())
def test_the_msgspec_plan_shape_accepts_only_plans_the_schema_accepts(
    plan: dict[str, Any], max_steps: int, goal: bool
) -> None:
    """Both shapes: a plan document (goal=True) and a model's plan answer, which has no goal (goal=False)."""
    schema_ok = not schema_problems(plan, plan_schema([], max_steps=max_steps, goal=goal))
    if _fits_plan_shape(plan, max_steps, goal):
        assert schema_ok
    # and the fast path changes no verdict: problems are the schema's, whichever path decided
    found = [p for p in structural_problems(plan, max_steps=max_steps, goal=goal) if "duplicate" not in p.message]
    nulls = isinstance(plan.get("steps"), list) and any(
        isinstance(s, dict) and any(v is None for v in s.values()) for s in plan["steps"]
    )
    if not nulls:  # null optional fields are dropped before checking; the raw schema would flag them
        assert bool(found) == (not schema_ok)


def test_a_valid_plan_is_accepted_without_the_schema_and_a_broken_one_gets_every_problem() -> None:
    good = {"goal": "g", "steps": [{"step_id": "s1", "description": "d", "tool": "calc", "args": {"x": 1}}]}
    assert _fits_plan_shape(good, 10, True) and structural_problems(good) == []
    answer = {"steps": good["steps"]}  # a model's plan answer: no goal, which the planner sets
    assert _fits_plan_shape(answer, 10, False) and structural_problems(answer, goal=False) == []
    assert [p.message for p in structural_problems(answer)] == ["(root): 'goal' is a required property"]
    bad = {"goal": "", "steps": [{"step_id": "s1", "description": "", "agent": "robot"}]}
    messages = sorted(p.message for p in structural_problems(bad))
    assert messages == [
        "goal: '' should be non-empty",
        "steps/0/agent: 'robot' is not one of ['llm']",
        "steps/0/description: '' should be non-empty",
    ]
    assert not _fits_plan_shape({"goal": "g", "steps": [good["steps"][0]] * 3}, 2, True)


def _spec(name: str = "calc") -> ToolSpec:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    return ToolSpec(name=name, description="d", input_schema=schema, output_schema={"type": "integer"})


def test_a_step_is_checked_once_per_run_but_a_tool_replaced_or_removed_midway_is_seen() -> None:
    registry = {"calc": _spec()}
    looked: list[str] = []

    def lookup(name: str) -> ToolSpec | None:
        looked.append(name)
        return registry.get(name)

    resolver = ToolResolver(lookup)
    step = PlanStep(step_id="s1", description="d", tool="calc", args={"x": "one"})
    first = resolver.check(step)
    assert first.problems == ["args for tool 'calc' invalid at x: expected integer, got string 'one'"]
    first.problems.clear()  # a caller changing its copy changes nothing for the next one
    assert resolver.check(step).problems == ["args for tool 'calc' invalid at x: expected integer, got string 'one'"]
    step.args = {"x": 1}
    assert resolver.check(step).runnable
    registry["calc"] = ToolSpec(
        name="calc", description="d", input_schema={"type": "object", "required": ["y"]}, output_schema={}
    )
    assert resolver.check(step).problems == ["args for tool 'calc' invalid at (root): 'y' is a required property"]
    del registry["calc"]
    assert resolver.check(step).problems == ["Tool 'calc' not found in registry"]


def test_redaction_finds_secret_named_keys_in_any_case_and_spelling() -> None:
    redactor = Redactor(["sk-Secret-123"])
    for key in ("Authorization", "X-API-KEY", "x_api_key", "Proxy-Authorization", "ACCESS-TOKEN", "apiKey"):
        record = {"headers": {key: "v"}}
        encoded = str(record).replace("'", '"').encode()
        assert redactor.may_hold(encoded), key
        assert redactor.scrub(record) == {"headers": {key: REDACTED}}
    assert redactor.may_hold(b'{"note":"uses SK-SECRET-123"}')
    assert redactor.scrub({"note": "uses sk-Secret-123"}) == {"note": f"uses {REDACTED}"}
    assert not redactor.may_hold(b'{"event":"cycle","plan_state":{"goal":"add 2 and 3"}}')


def test_a_key_spelled_with_the_kelvin_sign_is_found_raw_or_escaped() -> None:
    assert [c for c in map(chr, range(128, 0x110000)) if c.lower().isascii()] == [KELVIN]
    redactor = Redactor([])
    for key in (f"access_to{KELVIN}en", f"API_{KELVIN}EY"):
        record = {"headers": {key: "v"}}
        assert redactor.may_hold(msgspec.json.encode(record)), key
        assert redactor.may_hold(json.dumps(record).encode()), key  # as \u212a
        assert redactor.scrub(record) == {"headers": {key: REDACTED}}


_scalar_kinds = st.sampled_from(["string", "integer", "number", "boolean", "null"])
_leaf_schema = st.one_of(
    st.builds(lambda k: {"type": k}, _scalar_kinds),
    st.builds(lambda ks: {"type": ks}, st.lists(_scalar_kinds, min_size=1, max_size=3, unique=True)),
    st.builds(lambda ks: {"anyOf": [{"type": k} for k in ks]}, st.lists(_scalar_kinds, min_size=1, max_size=3)),
    st.just({}),
    st.just({"type": "object"}),
    st.just({"type": "string", "minLength": 1}),  # a keyword the fast path does not take: the schema decides
    st.just({"type": "array", "items": {"type": "integer"}}),
)
_tool_schema = st.recursive(
    _leaf_schema,
    lambda inner: st.builds(
        lambda props, required, extra: {
            "type": "object",
            "properties": props,
            "required": [n for n in props if n in required],
            **({} if extra is None else {"additionalProperties": extra}),
        },
        st.dictionaries(st.sampled_from(["a", "b", "text", "class", "_x"]), inner, max_size=3),
        st.sets(st.sampled_from(["a", "b", "text", "class", "_x"])),
        st.none() | st.booleans(),
    ),
    max_leaves=5,
)
_odd = st.sampled_from([(1,), b"x", 1.0, 2**70, float("inf"), {1: 2}, frozenset()])
_value = st.recursive(
    _json | _odd,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "text", "class", "_x", "c"]), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=600)
@given(schema=_tool_schema, instance=_value)
def test_the_msgspec_form_of_a_tool_schema_accepts_only_what_the_schema_accepts(
    schema: dict[str, Any], instance: Any
) -> None:
    slow = jsonschema.Draft202012Validator(schema)
    assert schema_problems(instance, schema) == sorted(
        ("/".join(str(p) for p in e.absolute_path) or "(root)", _message(e)) for e in slow.iter_errors(instance)
    )
    fast = _fast_type(schema)
    if fast is not None:
        try:
            msgspec.convert(instance, fast)
        except msgspec.ValidationError:
            return
        assert slow.is_valid(instance)


def test_the_builtin_tools_schemas_take_the_fast_path_and_still_name_problems() -> None:
    echo = {
        "additionalProperties": False,
        "properties": {"text": {"title": "Text", "type": "string"}},
        "required": ["text"],
        "type": "object",
    }
    assert _fast_type(echo) is not None and _fast_type({"type": "number"}) is float
    assert schema_problems({"text": "hi"}, echo) == []
    assert schema_problems({"text": 3, "loud": True}, echo) == [
        ("(root)", "Additional properties are not allowed ('loud' was unexpected)"),
        ("text", "expected string, got integer 3"),
    ]
    assert schema_problems(5, {"type": "number"}) == [] and schema_problems(True, {"type": "number"}) != []


@pytest.mark.parametrize("kind", ["string", "integer", "number", "boolean", "null", "object"])
def test_every_json_type_takes_exactly_the_values_the_schema_takes(kind: str) -> None:
    schema = {"type": kind}
    slow = jsonschema.Draft202012Validator(schema)
    for value in ["s", 1, 1.5, 1.0, True, None, {}, {"a": 1}, [], 2**70]:
        try:
            msgspec.convert(value, _fast_type(schema))
            fast = True
        except msgspec.ValidationError:
            fast = False
        assert not fast or slow.is_valid(value), (kind, value)
        assert (schema_problems(value, schema) == []) == slow.is_valid(value), (kind, value)


@settings(max_examples=300)
@given(
    value=st.recursive(
        _json | st.sampled_from([float("nan"), float("inf"), "é ✓ \n", 2**70]),
        lambda v: st.lists(v, max_size=3) | st.dictionaries(_text, v, max_size=3),
        max_leaves=6,
    )
)
def test_the_shared_json_text_is_what_json_dumps_writes(value: Any) -> None:
    assert as_text(value) == (value if isinstance(value, str) else json.dumps(value, default=str))
    assert as_text({"when": AN_ENUM_MEMBER}) == json.dumps({"when": AN_ENUM_MEMBER}, default=str)  # its str


_piece = st.sampled_from(["a", '"', "\\", "\n", "é", "✓", '\\\\"', "\x00", '\\"', " "])
_long_text = st.builds(
    lambda parts, n: "".join(parts)[:n], st.lists(_piece, min_size=1, max_size=1400), st.integers(0, 1400)
)
_with_texts = st.recursive(
    _json | _long_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text | _long_text, inner, max_size=3),
    max_leaves=5,
)


def _longest_text(node: Any) -> int:
    if isinstance(node, str):
        return len(node)
    if isinstance(node, dict):
        return max([0, *map(len, node), *map(_longest_text, node.values())])
    if isinstance(node, list):
        return max([0, *map(_longest_text, node)])
    return 0


@settings(max_examples=400)
@given(record=_with_texts)
def test_the_large_text_probe_never_misses_a_text_of_1_kib_characters(record: Any) -> None:
    if _longest_text(record) >= LARGE:
        assert may_hold_large_text(msgspec.json.encode(record))


def test_the_large_text_probe_measures_a_run_and_probes_on_after_it() -> None:
    # a text of 1000 characters lies across a whole probe block: measured, it is too short to walk for
    assert not may_hold_large_text(msgspec.json.encode({"pad": "p" * 480, "out": "q" * 1000}))
    # a run just short of 1 KiB, then a text of exactly 1 KiB right after it: the probing goes on and finds it
    assert not may_hold_large_text(msgspec.json.encode({"a": "y" * 1018, "b": "z" * 1023}))
    assert may_hold_large_text(msgspec.json.encode({"a": "y" * 1018, "b": "z" * LARGE}))
