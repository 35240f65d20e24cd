"""A local OpenAI-compatible server for subprocess tests and benches: scripted answers, counted requests.

Each distinct request body gets the next scripted answer and keeps it (a request sent again gets the same answer),
so a call re-sent after a crash is recognised and counted; with `kinds`, the answer is chosen by the kind of answer
asked for (the JSON schema's name, "" for free text) instead, for many runs of one script. `hold` makes the server
wait before answering the n-th distinct request until `release()`; `delay` answers every request after that many
seconds (a slow provider).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeProvider:
    def __init__(
        self,
        answers: Sequence[str] = (),
        *,
        kinds: Mapping[str, str] | None = None,
        hold: int | None = None,
        delay: float = 0.0,
    ):
        self.answers, self.kinds, self.hold, self.delay = list(answers), kinds, hold, delay
        self.order: list[str] = []  # distinct bodies in order of arrival
        self.sent: Counter[str] = Counter()  # how many times each body arrived
        self.requests = 0
        self.holding = threading.Event()  # set while the held request waits
        self._release = threading.Event()
        self._lock = threading.Lock()
        self.url = ""

    def release(self) -> None:
        self._release.set()

    def answer_for(self, body: bytes) -> str:
        key = hashlib.sha256(body).hexdigest()
        with self._lock:
            self.requests += 1
            self.sent[key] += 1
            if key not in self.order:
                self.order.append(key)
            n = self.order.index(key)
        if self.hold is not None and n == self.hold and not self._release.is_set():
            self.holding.set()
            self._release.wait(60)
        if self.delay:
            time.sleep(self.delay)
        if self.kinds is not None:
            schema = (json.loads(body).get("response_format") or {}).get("json_schema") or {}
            return self.kinds[schema.get("name", "")]
        return self.answers[n] if n < len(self.answers) else "no more answers"

    def resent(self) -> list[int]:
        """The indexes (in order of first arrival) of the requests that arrived more than once."""
        return [i for i, key in enumerate(self.order) if self.sent[key] > 1]


def completion(text: str, model: str = "fake") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": max(1, len(text) // 4),
            "total_tokens": 10 + len(text) // 4,
        },
    }


@contextmanager
def json_server(
    handle: Callable[[str, bytes], tuple[int, bytes]],
    *,
    delivered: Callable[[bool], None] | None = None,
    keep_alive: bool = False,
) -> Iterator[str]:
    """A standard-library HTTP server on a free loopback port that answers each POST with `handle(path, body)`, a
    status and a JSON body; its base URL (`http://127.0.0.1:PORT`), stopped on exit. `delivered(ok)` is called in the
    request's thread once the answer is written (False: the client had hung up). `keep_alive`: HTTP/1.1, so a
    client reuses its connections. The one scaffold of the suite's fake servers and the benches'."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

        def do_POST(self) -> None:
            status, data = handle(self.path, self.rfile.read(int(self.headers.get("content-length") or 0)))
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                ok = True
            except OSError:
                ok = False
            if delivered is not None:
                delivered(ok)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serving(provider: FakeProvider) -> Iterator[FakeProvider]:
    def answer(path: str, body: bytes) -> tuple[int, bytes]:
        return 200, json.dumps(completion(provider.answer_for(body))).encode()

    with json_server(answer) as url:
        provider.url = f"{url}/v1"
        try:
            yield provider
        finally:
            provider.release()
