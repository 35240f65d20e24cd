"""A stand-in for llama-server, run as a script in the server's place (tests/adapters/test_local_llm.py,
test_kept_server.py), and helpers to read what it recorded."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

# A stand-in for llama-server: answers /health and /v1/chat/completions on --port, saves and restores slot files in
# --slot-save-path (/slots/{id}?action=save|restore), ignores the other flags, and appends its pid, argv and every
# request (path, body, Authorization header) to RECORD; GET /slots says slot 0 is processing while RECORD.busy
# exists. MODE picks a misbehaviour ("slots-500": every slot action fails).
FAKE_SERVER = textwrap.dedent(
    """
    import json, os, signal, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer

    argv = sys.argv[1:]
    port = int(argv[argv.index("--port") + 1])

    def record(entry):
        with open(RECORD, "a") as out:
            out.write(json.dumps(entry) + "\\n")

    record({"pid": os.getpid(), "argv": argv})
    if MODE == "crash":
        print("llama_model_load: loading model", flush=True)
        print("error: failed to load model 'broken.gguf'", file=sys.stderr, flush=True)
        sys.exit(3)
    if MODE == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if MODE == "loading":
                self.reply(503, {"error": {"code": 503, "message": "Loading model"}})
            elif self.path == "/slots":
                record({"path": self.path, "auth": self.headers.get("Authorization")})
                self.reply(200, [{"id": 0, "is_processing": os.path.exists(RECORD + ".busy")}])
            else:
                self.reply(200, {"status": "ok"})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            record({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            if self.path.startswith("/slots/"):
                folder = argv[argv.index("--slot-save-path") + 1]
                return self.slot_action(self.path.split("=")[-1], os.path.join(folder, body["filename"]))
            message = {"role": "assistant", "content": '{"sum": 15}'}
            self.reply(200, {
                "id": "chatcmpl-fake", "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
                "timings": {"cache_n": 8},
            })

        def slot_action(self, action, path):
            if MODE == "slots-500":
                return self.reply(500, {"error": {"code": 500, "message": "slot action failed"}})
            if action == "save":
                with open(path, "w") as out:
                    out.write("fake slot")
                return self.reply(200, {"id_slot": 0, "n_saved": 12, "n_written": 9})
            if os.path.exists(path) and open(path).read() == "fake slot":
                return self.reply(200, {"id_slot": 0, "n_restored": 12, "n_read": 9})
            self.reply(400, {"error": {"code": 400, "message": "Unable to restore slot"}})

    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
    """
)


def fake_binary(tmp_path: Path, mode: str = "ok") -> Path:
    script = tmp_path / f"fake-llama-server-{mode}"
    header = f"#!{sys.executable}\nMODE = {mode!r}\nRECORD = {str(tmp_path / 'record.jsonl')!r}\n"
    script.write_text(header + FAKE_SERVER)
    script.chmod(0o755)
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    return script


def records(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "record.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def starts(tmp_path: Path) -> list[dict[str, Any]]:
    return [entry for entry in records(tmp_path) if "pid" in entry]


def is_gone(pid: int, wait: float = 3.0) -> bool:
    """True once `pid` no longer exists or is a zombie (an orphan whose reaper has not run yet)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.02)
    return False
