"""What aeon serve says in the A2A protocol (application/views/a2a.py): a task state for every run status, the
tools as the card's skills, the approval question and the replies it takes."""

from __future__ import annotations

import pytest

from aeon.application.results import RunStatus
from aeon.application.views.a2a import agent_card, approval_reply, task_state
from aeon.domain.provenance import Effect
from aeon.domain.tools import ToolSpec

A2A_STATES = {"completed", "failed", "canceled", "rejected", "input-required"}


@pytest.mark.parametrize("status", list(RunStatus))
def test_every_run_status_has_an_a2a_task_state(status: RunStatus) -> None:
    assert task_state(status) in A2A_STATES


def test_a_run_awaiting_approval_is_input_required_and_a_denied_one_rejected() -> None:
    assert task_state(RunStatus.AWAITING_APPROVAL) == "input-required"
    assert task_state(RunStatus.DENIED) == "rejected"
    assert task_state(RunStatus.INTERRUPTED) == "canceled"
    assert task_state(RunStatus.TTL_EXPIRED) == "failed"


def test_the_card_lists_each_tool_as_a_skill_with_its_effect() -> None:
    spec = ToolSpec(
        name="publish", description="Publish a post.\nMore.", input_schema={}, output_schema={},
        requires_approval=True, effect=Effect.EXTERNAL,
    )  # fmt: skip
    card = agent_card(name="aeon", description="d", url="http://h/a2a", version="1", tools=[spec])
    assert card["skills"][1:] == [
        {"id": "publish", "name": "publish", "description": "Publish a post.", "tags": ["tool", "external", "approval"]}
    ]
    assert card["skills"][0]["id"] == "aeon.run"
    assert card["supportedInterfaces"][0]["url"] == "http://h/a2a" and card["capabilities"] == {"streaming": True}


@pytest.mark.parametrize(
    ("text", "reply"),
    [("approve", (True, None)), (" Yes ", (True, None)), ("deny: not today", (False, "not today")),
     ("no", (False, "denied")), ("maybe", None)],
)  # fmt: skip
def test_a_reply_to_the_approval_question_approves_denies_or_is_not_one(
    text: str, reply: tuple[bool, str | None] | None
) -> None:
    assert approval_reply(text) == reply
