"""WebhookSender (adapters/webhooks): the body signed with HMAC-SHA256 of the secret, bounded, retried on 5xx, 429
and connection errors for at most its attempts, never on another 4xx; the same delivery id on every try."""

from __future__ import annotations

import hashlib
import hmac
import json

import httpx

from aeon.adapters.webhooks.sender import WebhookSender, signature


def _sender(answers: list[int | Exception], seen: list[httpx.Request], **kwargs: object) -> WebhookSender:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return httpx.Response(answer)

    return WebhookSender("http://hooks.test/end", "k3y", wait=0, transport=httpx.MockTransport(handle), **kwargs)  # type: ignore[arg-type]


def test_a_failed_delivery_is_retried_with_the_same_signed_body_until_it_is_taken() -> None:
    seen: list[httpx.Request] = []
    sender = _sender([503, httpx.ConnectError("refused"), 429, 204], seen)

    assert sender.send({"run": {"run_id": "r"}}, "r.end") == 204
    assert len(seen) == 4 and len({r.content for r in seen}) == 1
    expected = "sha256=" + hmac.new(b"k3y", seen[0].content, hashlib.sha256).hexdigest()
    assert all(r.headers["x-aeon-signature"] == expected and r.headers["x-aeon-delivery"] == "r.end" for r in seen)


def test_a_refusal_is_not_retried_and_the_attempts_are_bounded() -> None:
    seen: list[httpx.Request] = []
    assert _sender([400, 200], seen).send({"run": {}}, "x") == 400 and len(seen) == 1
    seen.clear()
    assert _sender([500] * 5, seen, attempts=3).send({"run": {}}, "x") == 500 and len(seen) == 3


def test_a_body_past_its_bound_leaves_out_the_result_and_says_so() -> None:
    seen: list[httpx.Request] = []
    run = {"run_id": "r", "status": "completed", "request": "q", "started": "t", "result": {"answer": "x" * 5000}}
    _sender([200], seen, max_body=1000).send({"event": "run.ended", "run": run}, "r.end")

    sent = json.loads(seen[0].content)
    assert len(seen[0].content) <= 1000 and sent["truncated"] is True and "result" not in sent["run"]
    assert signature("k3y", seen[0].content) == seen[0].headers["x-aeon-signature"]
