"""The secret scan (Redactor.may_hold) finds every needle a search per needle over the whole text would find, in one
pass: a needle overlapping "tokens" too, and a secret written into a plan step the log has already found clean."""

from __future__ import annotations

import io
import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.application.redaction import (
    _FOLD,
    _KELVIN_RAW,
    _KEY_WORDS,
    _RAW_NEEDLES,
    _SHAPE_NEEDLES,
    REDACTED,
    Redactor,
    _escaped_forms,
)
from aeon.domain.log_pass import CycleRecord
from aeon.domain.plan import Plan, PlanStep

GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5" * 4


def _plan(steps: int = 10) -> Plan:
    return Plan(
        goal="benchmark",
        steps=[PlanStep(step_id=f"s{i}", description="add", tool="calculator", args={"x": i}) for i in range(steps)],
    )


def _record(plan: Plan, step_number: int) -> CycleRecord:
    return CycleRecord(
        pass_number=1,
        step_number=step_number,
        plan_state=msgspec.Raw(msgspec.json.encode(plan)),
        llm_output=[],
        supervisor_actions=[],
        tool_calls=[],
        ttl_remaining=1,
        errors=[],
    )


def test_a_needle_overlapping_tokens_is_found() -> None:
    """ "tokens" is no needle, but a configured secret starting inside it is one (every occurrence is looked at)."""
    redactor = Redactor(["ens-0123456789"])
    assert redactor.may_hold(b"the tokens-0123456789 here")
    assert not redactor.may_hold(b"the tokens 0123456789 here")
    assert Redactor().may_hold(b"a token, then tokens") and not Redactor().may_hold(b"tokens, then tokens")


def test_a_secret_written_into_a_step_already_scanned_clean_is_still_redacted() -> None:
    stream = io.StringIO()
    log = JsonlEventLog(None, stream=stream, secrets=["configured-secret-value"])
    plan = _plan()
    log.emit(_record(plan, 1))
    plan.steps[2].step_output = f"found {GITHUB_TOKEN}"
    plan.steps[7].notes = ["the key is configured-secret-value"]
    log.emit(_record(plan, 2))
    first, second = stream.getvalue().splitlines()
    assert REDACTED not in first
    assert GITHUB_TOKEN not in second and "configured-secret-value" not in second
    steps = json.loads(second)["plan_state"]["steps"]
    assert steps[2]["step_output"] == f"found {REDACTED}" and steps[7]["notes"] == [f"the key is {REDACTED}"]


@pytest.mark.parametrize("cut", ['{"', "}]"])
def test_a_configured_secret_holding_a_brace_is_found_across_it_after_texts_found_clean_either_side(cut: str) -> None:
    secret = f"pass{cut}word-0123"
    redactor = Redactor([secret])
    head, tail = "x" * 600 + " it is pass", "word-0123 and more text" + "y" * 600
    assert not redactor.may_hold(f"{head}{cut}other".encode()) and not redactor.may_hold(f"z{cut}{tail}".encode())
    text = f"{head}{cut}{tail}"
    assert redactor.may_hold(text.encode())
    assert secret not in redactor.text(text)


def one_search_per_needle(encoded: bytes, secrets: tuple[str, ...]) -> bool:
    """The scan as it was: the whole encoding, one `in` per needle, "token" counted against "tokens"."""
    forms = {f.encode() for s in secrets for f in _escaped_forms(s)}
    needles = {n.translate(_FOLD, b"_-") for n in {*forms, *(w.encode() for w in _KEY_WORDS), *_SHAPE_NEEDLES}}
    if any(n in encoded for n in _RAW_NEEDLES):
        return True
    blob = encoded.translate(_FOLD, b"_-")
    if any(n in blob for n in needles) or blob.count(b"token") != blob.count(b"tokens"):
        return True
    return not (blob.isascii() and b"\\" not in blob) and (_KELVIN_RAW in blob or b"\\u212a" in blob)


_WORDS = ["add", "token", "tokens", "max_tokens", "pass", "word", "sk-", "://", "ghp", "eyJ", "Bearer", "API_KEY"]
_WORDS += ["secret", "secretive-1", "passwordly-2", "passwordly-22"]
_WORDS += ["\u212a", "\\u212a", "x" * 40]
_TEXT = st.lists(st.sampled_from([*_WORDS, "{", '"', "_", "-", " ", '{"', "}]", "api", "ab", "cd"]), max_size=12).map(
    "".join
)
_VALUE: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.integers(), _TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=300)
@given(
    st.lists(st.tuples(_VALUE, st.booleans()), min_size=1, max_size=4),
    st.sampled_from(
        [
            (),
            ("api-key-0123456789",),
            ('ab{"cd-0123456789',),
            ("ab}]cd-0123456789",),
            ("secretive-1", "passwordly-22", "x" * 41),
        ]
    ),
)
def test_the_verdict_is_one_search_per_needle_over_the_whole_and_a_clean_verdict_hides_no_secret(
    documents: list[tuple[Any, bool]], secrets: tuple[str, ...]
) -> None:
    redactor = Redactor(secrets)
    for document, as_text in documents:  # one after another, as a log's records
        value = {"pad": "p" * 600, "doc": document}
        encoded = json.dumps(value).encode() if as_text else msgspec.json.encode(value)
        encoded = encoded.replace(b"\\", b"") if as_text else encoded  # raw text: `{"` inside a string too
        verdict = redactor.may_hold(encoded)
        assert verdict == one_search_per_needle(encoded, secrets)
        if not verdict and not as_text:
            assert redactor.scrub(value) == value


@pytest.mark.parametrize("length", [40, 200, 3000])
@pytest.mark.parametrize("needle", ["apikey", "Authorization", "PASSWD", "Secret", "private_key", "Bearer", "eyJ"])
def test_a_needle_is_found_in_a_long_text_as_in_a_short_one(needle: str, length: int) -> None:
    """Wherever a needle sits in a short or a long text, it is found."""
    pad = "plain words, ids and numbers 0123 " * (length // 34 + 1)
    redactor = Redactor(["zz-configured-0123"])
    for text in (
        f"{needle}{pad}",
        f"{pad[:length]}{needle}{pad}",
        f"{pad[:length]}{needle}",
        f"{pad}zz-configured-0123",
    ):
        assert redactor.may_hold(text.encode())
    assert redactor.may_hold(f"{pad[:length]}a token{pad}".encode())
    assert not redactor.may_hold(f"{pad[:length]} tokens {pad}".encode())
    assert not redactor.may_hold(pad[:length].encode())
