"""Every prompt ends its answer at the next few-shot label, and both wire formats carry that stop sequence."""

from __future__ import annotations

import asyncio
import json

import httpx

from aeon.adapters.llm.anthropic import AnthropicLLM
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.application.llm.prompts import evaluation, templates
from aeon.domain.llm import Message

from harness import SUM_STEP, plan_json, run


def test_every_answering_template_has_a_stop_sequence_that_opens_its_next_example():
    for t in (*templates.ALL, *evaluation.ALL):
        if t is templates.PREAMBLE:
            continue
        assert t.stop, t.name
        assert any(s.strip() in t.text for s in t.stop), t.name


def _capture(reply: dict[str, object]) -> tuple[list[dict[str, object]], httpx.MockTransport]:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=reply)

    return seen, httpx.MockTransport(handler)


def test_openai_sends_stop_and_anthropic_sends_stop_sequences():
    chat = {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}], "usage": {}}
    seen, transport = _capture(chat)
    llm = OpenAICompatLLM("http://x/v1", "m", transport=transport)
    asyncio.run(llm.complete([Message(role="user", content="hi")], stop=("\nRequest:",)))
    assert seen[0]["stop"] == ["\nRequest:"]
    msg = {"content": [{"type": "text", "text": "ok"}], "stop_reason": "stop_sequence", "usage": {}}
    seen, transport = _capture(msg)
    llm2 = AnthropicLLM("http://x", "m", transport=transport)
    asyncio.run(llm2.complete([Message(role="user", content="hi")], stop=("\nGoal:",)))
    assert seen[0]["stop_sequences"] == ["\nGoal:"]


def test_no_stop_field_is_sent_when_the_caller_gives_none():
    chat = {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}], "usage": {}}
    seen, transport = _capture(chat)
    asyncio.run(OpenAICompatLLM("http://x/v1", "m", transport=transport).complete([Message(role="user", content="x")]))
    assert "stop" not in seen[0]


def test_the_plan_call_is_sent_with_the_plan_templates_stop(tmp_path, monkeypatch):
    from aeon.adapters.llm.scripted import ScriptedLLM

    seen: list[tuple[str, ...]] = []
    original = ScriptedLLM.complete

    async def spy(self, messages, **kw):  # type: ignore[no-untyped-def]
        seen.append(tuple(kw.get("stop") or ()))
        return await original(self, messages, **kw)

    monkeypatch.setattr(ScriptedLLM, "complete", spy)
    run(tmp_path, [plan_json(SUM_STEP)])
    assert seen == [templates.PLAN.stop]
