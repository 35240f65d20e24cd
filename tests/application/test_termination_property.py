"""Property: whatever the model answers, a run ends with a structured result within its budgets."""

from __future__ import annotations

import json
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from aeon.application.results import RunStatus

from harness import document, run

_step = st.fixed_dictionaries(
    {"step_id": st.sampled_from(["s1", "s2", "s3"]), "description": st.text(max_size=20)},
    optional={
        "tool": st.sampled_from(["calculator", "echo", "adder", ""]),
        "agent": st.sampled_from(["llm", "robot"]),
        "args": st.dictionaries(
            st.sampled_from(["expression", "text", "x"]), st.one_of(st.text(max_size=10), st.integers())
        ),
    },
)
_plan = st.builds(
    lambda steps, goal: json.dumps({"goal": goal, "steps": steps}), st.lists(_step, max_size=4), st.text(max_size=10)
)
_answer = st.one_of(
    _plan,
    st.text(max_size=60),
    st.sampled_from(['{"goal": "g"}', "```json\n{'goal': 'g', 'steps': [],}\n```", "null", "[]", "{"]),
    st.fixed_dictionaries({"error": st.sampled_from(["unavailable", "rejected", "invalid"])}),
)


@settings(max_examples=150)
@given(answers=st.lists(_answer, max_size=12), ttl=st.integers(0, 3), cap=st.integers(0, 8))
def test_any_model_behaviour_ends_structured_within_the_call_cap(answers, ttl, cap):
    with TemporaryDirectory() as d:
        r = run(Path(d), answers, ttl=ttl, max_llm_calls=cap)
        records = r.records()
    result = r.result
    assert result.status in (RunStatus.COMPLETED, RunStatus.UNVERIFIED, RunStatus.TTL_EXPIRED, RunStatus.ERROR)
    assert len(r.llm.requests) <= cap
    assert document(result)["budget"]["llm_calls"] == len(r.llm.requests)
    assert (result.status is RunStatus.TTL_EXPIRED) == (result.ttl_expiration is not None)
    assert (result.status is RunStatus.ERROR) == (result.error is not None)
    assert records[-1]["event"] == "run_end"
    if result.plan is not None and result.status is RunStatus.COMPLETED:
        assert all(s["status"] in ("complete", "failed") for s in document(result)["plan"]["steps"])
