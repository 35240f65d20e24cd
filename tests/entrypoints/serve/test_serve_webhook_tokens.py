"""`aeon serve`'s webhook and tokens over real HTTP: a run's end is POSTed once to the configured receiver, signed,
and retried when the receiver fails; off loopback every request needs a bearer token, made with `aeon serve token
add` (shown once, kept hashed), refused once revoked, and a server without any token will not start."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from durable_harness import aeon
from serve_harness import CONFIG, start
from test_serve_runs import ended, posted

SECRET = "whsec-test-0123456789"


class Receiver:
    """A local webhook receiver: answers 503 to the first `failures` deliveries, 200 after; keeps each one."""

    def __init__(self, failures: int) -> None:
        self.got: list[tuple[int, dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                status = 503 if len(receiver.got) < failures else 200
                receiver.got.append((status, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def delivered(self, run_id: str) -> list[tuple[int, dict[str, str], bytes]]:
        return [g for g in self.got if json.loads(g[2])["run"]["run_id"] == run_id]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver(failures=1)
    yield found
    found.server.shutdown()


def _wait(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_run_s_end_is_delivered_once_signed_and_retried_after_a_failure(tmp_path: Path, receiver: Receiver) -> None:
    config = yaml.safe_load((CONFIG / "scripted-demo.yaml").read_text())
    config["llm"]["script"] = str(CONFIG / config["llm"]["script"])
    config["serve"] = {"webhook": {"url": receiver.url, "secret": SECRET}}
    (tmp_path / "hook.yaml").write_text(yaml.safe_dump(config))
    server = start(tmp_path, "--config", "hook.yaml")
    try:
        with server.client() as http:
            first = posted(http)
            ended(http, first)
            _wait(lambda: any(s == 200 for s, _, _ in receiver.delivered(first)), "the first run's end delivered")
            second = posted(http)  # its delivery, after the first's retries, shows the first was not sent again
            _wait(lambda: receiver.delivered(second), "the second run's end delivered")
    finally:
        server.stop()

    tries = receiver.delivered(first)
    assert [s for s, _, _ in tries] == [503, 200]
    assert len({h["x-aeon-delivery"] for _, h, _ in tries}) == 1 and len(receiver.delivered(second)) == 1
    _, headers, body = tries[-1]
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["x-aeon-signature"], expected)
    sent = json.loads(body)
    assert sent["event"] == "run.ended" and sent["run"]["status"] == "completed"
    assert sent["run"]["result"]["answer"] == "The sum of 5 and 10 is 15."
    assert SECRET not in body.decode()


def test_off_loopback_every_request_needs_a_token_that_can_be_revoked(tmp_path: Path) -> None:
    config = ("--config", str(CONFIG / "scripted-demo.yaml"))
    refused = aeon(tmp_path, "serve", "--host", "0.0.0.0", "--port", "0", *config)
    assert refused.returncode == 2 and "aeon serve token add NAME" in refused.stderr
    made = aeon(tmp_path, "serve", "token", "add", "ci", *config)
    token = made.stdout.strip()
    assert made.returncode == 0 and token.startswith("aeon_")
    assert aeon(tmp_path, "serve", "token", "add", "ci", *config).returncode == 2  # a name is one token
    assert token not in (tmp_path / ".aeon" / "aeon.sqlite").read_bytes().decode("latin-1")
    server = start(tmp_path, "--host", "0.0.0.0", *config)
    try:
        with server.client(base_url=server.url.replace("0.0.0.0", "127.0.0.1")) as http:
            without = http.get("/runs")
            wrong = http.get("/runs", headers={"authorization": "Bearer aeon_not-it"})
            run_id = posted(http, headers={"authorization": f"Bearer {token}"})
            listed = aeon(tmp_path, "serve", "token", "list", *config)
            revoked = aeon(tmp_path, "serve", "token", "revoke", "ci", *config)
            _wait(lambda: http.get("/runs", headers={"authorization": f"Bearer {token}"}).status_code == 401,
                  "the revoked token refused")  # fmt: skip
    finally:
        server.stop()

    assert without.status_code == wrong.status_code == 401
    assert run_id and "ci  made 20" in listed.stdout and token not in listed.stdout and revoked.returncode == 0
