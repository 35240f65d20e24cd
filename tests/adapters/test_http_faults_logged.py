"""Headline fault cases through the real JSONL log: request counts, waits asked for, a log that stays whole."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from aeon.adapters.eventlog.jsonl import JsonlEventLog
from aeon.adapters.llm.openai_compat import OpenAICompatLLM
from aeon.application.errors import LLMRejected
from aeon.domain.llm import Message

OK = {
    "id": "r1",
    "choices": [{"message": {"content": "fine"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
}


def drive(tmp_path: Path, responses: list[httpx.Response]) -> tuple[object, list[float], int, list[dict[str, object]]]:
    served: list[int] = []
    waits: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        served.append(1)
        return responses[len(served) - 1]

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    log = JsonlEventLog(tmp_path / "run.jsonl")
    log.bind("00000000-0000-4000-8000-000000000001")
    llm = OpenAICompatLLM(
        "http://llm.test/v1", "m", transport=httpx.MockTransport(handler), logger=log, sleep=sleep, random=lambda: 0.0
    )
    try:
        outcome: object = asyncio.run(llm.complete([Message(role="user", content="hi")]))
    except LLMRejected as exc:
        outcome = exc
    finally:
        asyncio.run(llm.aclose())
        log.close()
    path = tmp_path / "run.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return outcome, waits, len(served), records


def test_503_503_200_costs_exactly_three_requests_and_succeeds(tmp_path):
    outcome, waits, n, records = drive(
        tmp_path, [httpx.Response(503), httpx.Response(503), httpx.Response(200, json=OK)]
    )
    assert n == 3 and getattr(outcome, "text", None) == "fine"
    assert waits == [0.5, 1.0]  # jittered backoff from 0.5 s, random patched to 0
    retries = [r for r in records if r["event"] == "llm_retry"]
    assert [(r["status"], r["wait_seconds"]) for r in retries] == [(503, 0.5), (503, 1.0)]
    assert [r["seq"] for r in records] == list(range(len(records)))


def test_429_with_retry_after_one_waits_one_second(tmp_path):
    _, waits, n, records = drive(
        tmp_path, [httpx.Response(429, headers={"retry-after": "1"}), httpx.Response(200, json=OK)]
    )
    assert n == 2 and waits == [pytest.approx(1.0)]
    assert [r["wait_seconds"] for r in records if r["event"] == "llm_retry"] == [pytest.approx(1.0)]


def test_401_costs_exactly_one_request_and_never_logs_a_retry(tmp_path):
    body = {"error": {"message": "Incorrect API key provided"}}
    outcome, waits, n, records = drive(tmp_path, [httpx.Response(401, json=body)])
    assert n == 1 and waits == []
    assert isinstance(outcome, LLMRejected) and "rejected: HTTP 401" in str(outcome)
    assert not [r for r in records if r["event"] == "llm_retry"]
    assert all(isinstance(r, dict) for r in records)  # the log is whole JSON lines even on failure
