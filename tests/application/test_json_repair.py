"""Deterministic JSON repair (application/llm/jsonfix.py) keeps every key and every string value byte for byte.

Damage a model commonly does — single quotes, trailing commas, Python literals, prose or a code fence around the
object — is repaired without losing a key or changing a value; escaped quotes stay quotes and apostrophes survive.
Where the repair cannot be trusted, parse_json answers None rather than an object missing a key. The cases at the
end were bugs of the json-repair path (a changed value, or no object at all); loosely written JSON is now decoded
by a strict tokenizer first.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aeon.application.llm.jsonfix import parse_json
from aeon.application.views.result import result_document

from harness import SUM_STEP, plan_json, run

# Keys as _KEY in jsonfix sees them (it checks that every quoted key of the input survives).
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,11}", fullmatch=True)
# Prose: letters and digits of any script, spaces, sentence punctuation, comment-like characters, both quote kinds,
# colons, brackets and braces, backslashes, control characters, newlines and ``` code fences.
TEXT = st.lists(
    st.one_of(st.characters(categories=("L", "N")), st.sampled_from(" .,!?;:-()[]{}/#*'\"\\\n\t\f`"), st.just("```")),
    max_size=40,
).map("".join)
SCALAR = st.one_of(TEXT, st.integers(-(10**6), 10**6), st.booleans(), st.none())
VALUE = st.one_of(SCALAR, st.dictionaries(KEYS, SCALAR, max_size=3), st.lists(SCALAR, max_size=3))
OBJECT = st.dictionaries(KEYS, VALUE, min_size=1, max_size=6)
DAMAGE = st.fixed_dictionaries(
    {
        "single_quotes": st.booleans(),
        "raw_double_quotes": st.booleans(),  # inside single quotes: "hi" as is, or \"hi\" as JSON escapes it
        "python_literals": st.booleans(),
        "trailing_commas": st.booleans(),
        "around": st.sampled_from(["nothing", "prose", "fence"]),
    }
)


def _string(s: str, damage: dict[str, Any]) -> str:
    body = json.dumps(s, ensure_ascii=False)[1:-1]
    if not damage["single_quotes"]:
        return f'"{body}"'
    if damage["raw_double_quotes"]:
        body = body.replace('\\"', '"')
    return "'" + body.replace("'", "\\'") + "'"


def render(value: Any, damage: dict[str, Any]) -> str:
    """`value` as a model might write it: JSON with the damage asked for."""
    if isinstance(value, dict):
        items = [f"{_string(k, damage)}: {render(v, damage)}" for k, v in value.items()]
        return "{" + ", ".join(items) + ("," if damage["trailing_commas"] and items else "") + "}"
    if isinstance(value, list):
        items = [render(v, damage) for v in value]
        return "[" + ", ".join(items) + ("," if damage["trailing_commas"] and items else "") + "]"
    if isinstance(value, str):
        return _string(value, damage)
    if damage["python_literals"] and (value is None or isinstance(value, bool)):
        return repr(value)
    return json.dumps(value)


def surround(text: str, around: str) -> str:
    if around == "prose":
        return f"Here is the JSON you asked for:\n{text}\nLet me know if anything is missing."
    if around == "fence":
        return f"```json\n{text}\n```"
    return text


def keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys(v)}
    return set()


def strict_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@settings(max_examples=300)
@given(OBJECT, DAMAGE)
def test_repair_of_damaged_json_keeps_every_key_and_every_value_exactly(obj: dict[str, Any], damage: dict[str, Any]):
    text = surround(render(obj, damage), damage["around"])
    outcome = parse_json(text)
    assert outcome is not None, text
    assert keys(outcome.value) == keys(obj), text  # no key lost, none invented
    assert outcome.value == obj, text  # every value as written: quotes, apostrophes, literals
    assert outcome.repaired is not strict_json(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "{'answer': 'He said \\\"15\\\" and it\\'s final', 'clarity_state': 'CLEAR'}",
            {"answer": 'He said "15" and it\'s final', "clarity_state": "CLEAR"},
            id="single-quotes-escaped-quotes-apostrophe",
        ),
        pytest.param(
            "{'answer': 'He said \"15\"', 'note': 'it\\'s done'}",
            {"answer": 'He said "15"', "note": "it's done"},
            id="single-quotes-raw-double-quotes",
        ),
        pytest.param(
            '{"answer": "She said \\"it\'s 15\\"", "handoff_to_next": "15",}',
            {"answer": 'She said "it\'s 15"', "handoff_to_next": "15"},
            id="escaped-quotes-and-apostrophe-trailing-comma",
        ),
        pytest.param(
            '{"goal": "sum", "steps": [{"step_id": "s1", "args": {"expression": "5 + 10",},},],}',
            {"goal": "sum", "steps": [{"step_id": "s1", "args": {"expression": "5 + 10"}}]},
            id="trailing-commas-at-every-depth",
        ),
        pytest.param(
            "{'done': True, 'error': None, 'retry': False, 'note': 'None of it is True'}",
            {"done": True, "error": None, "retry": False, "note": "None of it is True"},
            id="python-literals-outside-strings-only",
        ),
        pytest.param(
            'Sure! Here is the plan:\n{"goal": "g", "steps": [], "why": "it\'s \\"simple\\""}\nHope this helps.',
            {"goal": "g", "steps": [], "why": 'it\'s "simple"'},
            id="prose-around",
        ),
        pytest.param(
            "```json\n{'issues': [], 'summary': 'no \\\"issues\\\" found'}\n```",
            {"issues": [], "summary": 'no "issues" found'},
            id="fenced-single-quotes",
        ),
        pytest.param(
            '{"a": 1, // the first\n "b": "x // not a comment",}',
            {"a": 1, "b": "x // not a comment"},
            id="line-comment-between-members",
        ),
    ],
)
def test_common_model_damage_is_repaired_with_every_key_and_value_intact(text: str, expected: dict[str, Any]):
    outcome = parse_json(text)
    assert outcome is not None
    assert outcome.value == expected
    assert outcome.repaired is True


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1 # note "b": 2\n}',  # json-repair reads `"b": 2` as part of the comment and drops b
        "{'a': 1, // 'b': 2\n 'c': 3}",  # b is in the text, though commented out: not trusted
        '{"a": 1, /* "b": 2 */ "c": 3}',  # the same in a block comment
        '{"a": 1 // note "b": 2}',  # the comment runs to the end: the object never closes (cut off)
    ],
    ids=["hash-comment", "line-comment", "block-comment", "comment-to-the-end"],
)
def test_a_repair_that_would_drop_a_key_visible_in_the_input_gives_none(text: str):
    assert parse_json(text) is None


def test_an_object_cut_off_mid_way_is_not_repaired_into_a_shorter_one():
    assert parse_json('{"goal": "g", "steps": [{"step_id": "s1"}, {"step_id": "s2", "desc') is None


def test_valid_json_is_returned_as_is_and_not_marked_repaired():
    text = '{"answer": "He said \\"hi\\", it\'s 15", "n": null}'
    outcome = parse_json(text)
    assert outcome is not None and outcome.repaired is False
    assert outcome.value == {"answer": 'He said "hi", it\'s 15', "n": None}


# -- once bugs (json-repair's heuristics changed these values); loosely written JSON is now decoded exactly ------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "{'answer': 'There are two steps, namely:', 'clarity_state': 'CLEAR'}",
            {"answer": "There are two steps, namely:", "clarity_state": "CLEAR"},
        ),
        (
            '{"answer": "He said \\"hi\\", then:", "clarity_state": "CLEAR",}',
            {"answer": 'He said "hi", then:', "clarity_state": "CLEAR"},
        ),
    ],
    ids=["single-quotes", "escaped-quote-trailing-comma"],
)
def test_a_value_ending_in_a_colon_after_a_comma_is_kept_whole(text: str, expected: dict[str, Any]):
    outcome = parse_json(text)
    assert outcome is not None and outcome.value == expected


@pytest.mark.parametrize("around", ["prose", "fence"])
def test_a_value_holding_a_code_fence_survives_repair(around: str):
    obj = {"answer": "Run:\n```bash\nls\n```\nthen read the list.", "clarity_state": "CLEAR"}
    outcome = parse_json(surround(json.dumps(obj), around))
    assert outcome is not None and outcome.value == obj


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"answer": "first line\\n",}', "first line\n"),
        ('{"answer": "form\\ffeed",}', "form\ffeed"),
        ('{"answer": "emoji \\ud83d\\ude00",}', "emoji \U0001f600"),  # as json.dumps writes it (ensure_ascii)
        ("{'answer': 'C:\\\\dir\\\\\\'s'}", "C:\\dir\\'s"),
    ],
    ids=["trailing-newline-stripped", "formfeed-kept-as-backslash-f", "surrogate-pair-not-joined", "backslash-quote"],
)
def test_escapes_in_a_repaired_value_decode_as_json_decodes_them(text: str, value: str):
    outcome = parse_json(text)
    assert outcome is not None and outcome.value == {"answer": value}


def test_a_repaired_answer_holding_an_escaped_emoji_is_logged_and_reported(tmp_path):
    reason = {"step_id": "s2", "description": "State the sum", "agent": "llm"}
    answer = '{"answer": "The sum is 15 \\ud83d\\ude00", "clarity_state": "CLEAR", "handoff_to_next": "",}'
    r = run(tmp_path, [plan_json(SUM_STEP, reason), answer])
    assert r.result.outputs["s2"].output == "The sum is 15 \U0001f600"
    assert [c["step_id"] for c in r.cycles()] == [None, "s1", "s2"]
    msgspec.json.encode(result_document(r.result))  # what `aeon run --json` prints: it encodes


def test_a_lone_surrogate_escape_in_an_answer_becomes_a_replacement_character_not_a_lost_record(tmp_path):
    reason = {"step_id": "s2", "description": "State the sum", "agent": "llm"}
    answer = '{"answer": "The sum is 15 \\ud83d", "clarity_state": "CLEAR", "handoff_to_next": ""}'
    r = run(tmp_path, [plan_json(SUM_STEP, reason), answer])
    assert r.result.outputs["s2"].output == "The sum is 15 \ufffd"
    assert [c["step_id"] for c in r.cycles()] == [None, "s1", "s2"]
    msgspec.json.encode(result_document(r.result))


def _the_whole_way(raw: str) -> Any:
    """What parse_json gives when every reading is tried, fast exit or not (its value and changes, or None)."""
    from aeon.application.llm import jsonfix

    text = raw.strip()
    try:
        return jsonfix.loads(text), []
    except ValueError:
        pass
    body = jsonfix.without_reasoning(text)
    if body is None:
        return None
    changes = [jsonfix._REASONING] if body != text else []
    found = jsonfix._read(body)
    if found is not None:
        return found[0], changes + found[1]
    assert not jsonfix.looks_truncated(body)
    outcome = jsonfix._guarded_repair(body, changes)
    return None if outcome is None else (outcome.value, outcome.changes)


_WORDS = ["an", " ", "answer", "None", "True", "'x'", '"y"', ",", ":", "1", "2.5", "\\n", "<think>", "</think>"]
_WORDS += ["NaN", "-", "Infinity", "null", "tru", "false", "\ufeff", "\\u007b"]
_PLAIN = st.lists(st.sampled_from(_WORDS), max_size=8).map("".join)


@settings(max_examples=300)
@given(_PLAIN)
def test_a_text_with_no_object_array_or_fence_reads_as_when_every_reading_is_tried(text: str):
    """Plain text (a reasoning step's answer from a model that wrote no JSON) skips the readings that need a brace,
    a bracket or a fence, and json.loads when its first character cannot open JSON, and comes out the same."""
    outcome = parse_json(text)
    expected = _the_whole_way(text)
    assert (None if outcome is None else (outcome.value, outcome.changes)) == expected
