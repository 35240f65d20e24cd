"""The local adapter end to end from a cassette: `aeon run` on `llm.adapter: local`, with no model and no compile.

`LocalLlamaLLM` really starts a server process, waits for /health and stops it at exit (or, with keep_alive, leaves it
running under its keeper for the next run); here that process is a tiny stand-in answering /health only, and every
model call replays the real Gemma 3 270M answers recorded for the
OpenAI-format run (the local adapter speaks that wire format through the same `OpenAICompatLLM`, so its requests
are byte-for-byte the same). A request the cassette lacks fails the test.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import aeon.adapters.llm.local as local_module
from aeon.adapters.llm import _kept_server
from aeon.entrypoints.cli import app

CASSETTE = "test_aeon_run_completes_through_the_http_adapter[openai].yaml"
HEALTH_ONLY = textwrap.dedent(
    """
    import json, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    argv = sys.argv[1:]
    port = int(argv[argv.index("--port") + 1])

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            data = b'{"status": "ok"}'
            self.send_response(200)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):  # model calls must come from the cassette, never from here
            self.send_response(500)
            self.send_header("content-length", "0")
            self.end_headers()

    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
    """
)


@pytest.fixture(scope="module")
def vcr_cassette_dir() -> str:
    return str(Path(__file__).resolve().parents[1] / "cassettes" / "test_e2e_run")


@pytest.fixture
def vcr_config(vcr_config: dict[str, Any]) -> dict[str, Any]:
    def health_goes_to_the_real_process(request: Any) -> Any:
        return None if request.path.endswith("/health") else request

    return {**vcr_config, "before_record_request": health_goes_to_the_real_process}


@pytest.mark.block_network(allowed_hosts=["127.0.0.1"])
@pytest.mark.default_cassette(CASSETTE)
@pytest.mark.vcr
@pytest.mark.parametrize("keep_alive", ["0", "300"])
def test_aeon_run_on_the_local_adapter_replays_the_real_model_and_stops_or_keeps_its_server(
    tmp_path, monkeypatch, keep_alive
):
    binary = tmp_path / "llama-server"
    binary.write_text(f"#!{sys.executable}\n{HEALTH_ONLY}")
    binary.chmod(0o755)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    started: list[Any] = []
    real_init = local_module.LocalLlamaLLM.__init__

    def with_fake_binary(self: Any, **kwargs: Any) -> None:
        real_init(self, **{**kwargs, "binary": binary})
        started.append(self)

    monkeypatch.setattr(local_module.LocalLlamaLLM, "__init__", with_fake_binary)
    monkeypatch.setenv("AEON_LOCAL_KEEP_ALIVE", keep_alive)
    monkeypatch.setenv("AEON_LOCAL_CACHE_DIR", str(tmp_path / "cache"))  # the kept server's folder: llama-servers/
    config = {
        "llm": {"adapter": "local", "model_path": str(model)},
        "run": {"max_plan_steps": 8},  # the plan schema's maxItems when the cassette was recorded
        "log": {"path": str(tmp_path / "run.jsonl")},
    }
    cfg = tmp_path / "aeon.yaml"
    cfg.write_text(yaml.safe_dump(config), encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    result = CliRunner().invoke(app, ["run", "calculate the sum of 5 and 10", "--config", str(cfg), "--json", "-q"])

    doc = json.loads(result.stdout)
    assert result.exit_code in (0, 3) and doc["error"] is None, (result.exit_code, doc.get("error"))
    assert doc["plan"]["steps"] and doc["budget"]["llm_calls"] >= 2  # profile and plan (one call), evaluation
    (llm,) = started
    records = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    (server,) = [r for r in records if r["event"] == "local_server_started"]
    stopped = [r for r in records if r["event"] == "local_server_stopped"]
    if keep_alive == "0":
        assert llm.server_pid is None and stopped  # the server process was stopped when the run ended
        return
    assert not stopped and (server["keep_alive"], server["reused"]) == (300.0, False)
    assert os.path.exists(f"/proc/{server['pid']}")  # left running for the next run
    assert _kept_server.stop_all(tmp_path / "cache" / "llama-servers")
