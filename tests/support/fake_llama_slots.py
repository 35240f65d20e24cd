"""An in-process stand-in for llama-server's slot endpoints (`/slots/{id}?action=save|restore`) and the one-token
priming completion, behind `httpx.MockTransport`: it writes and reads slot files in its --slot-save-path folder as
the real server does, and keeps every request in order."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

MAGIC = "fake-llama-slot\n"  # what a file must open with to restore; anything else is refused as llama.cpp does


class FakeSlotServer:
    """`fail` maps a step ("save", "restore", "prime") to a status code to answer it with, or to an exception."""

    def __init__(self, folder: Path, *, fail: dict[str, int | BaseException] | None = None) -> None:
        self.folder = folder
        self.fail = dict(fail or {})
        self.requests: list[tuple[str, dict[str, Any]]] = []  # ("prime" | "save" | "restore", body)
        self.slots: dict[int, str] = {}  # slot id -> the prompt it holds
        self.on_request: Callable[[str], None] | None = None

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url="http://127.0.0.1:1", transport=httpx.MockTransport(self._handle))

    def steps(self) -> list[str]:
        return [step for step, _ in self.requests]

    def _handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        step = "prime" if request.url.path == "/v1/chat/completions" else request.url.params["action"]
        self.requests.append((step, body))
        if self.on_request is not None:
            self.on_request(step)
        failure = self.fail.get(step)
        if isinstance(failure, BaseException):
            raise failure
        if failure is not None:
            return httpx.Response(failure, json={"error": {"code": failure, "message": f"{step} refused"}})
        slot = int(body.get("id_slot", 0)) if step == "prime" else int(request.url.path.rsplit("/", 1)[1])
        return getattr(self, f"_{step}")(slot, body)

    def _prime(self, slot: int, body: dict[str, Any]) -> httpx.Response:
        self.slots[slot] = body["messages"][0]["content"]
        usage = {"prompt_tokens": len(self.slots[slot].split()), "completion_tokens": 1, "total_tokens": 0}
        return httpx.Response(200, json={"choices": [{"message": {"content": "x"}}], "usage": usage})

    def _save(self, slot: int, body: dict[str, Any]) -> httpx.Response:
        held = self.slots.get(slot, "")
        path = self.folder / body["filename"]
        try:
            path.write_text(MAGIC + held, encoding="utf-8")
        except OSError as exc:
            return httpx.Response(500, json={"error": {"code": 500, "message": f"failed to open file: {exc}"}})
        count = len(held.split())
        return httpx.Response(200, json={"id_slot": slot, "filename": path.name, "n_saved": count, "n_written": 9})

    def _restore(self, slot: int, body: dict[str, Any]) -> httpx.Response:
        try:
            text = (self.folder / body["filename"]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        if not text.startswith(MAGIC):
            message = "Unable to restore slot, no available space in KV cache or invalid slot save file"
            return httpx.Response(400, json={"error": {"code": 400, "message": message}})
        self.slots[slot] = text.removeprefix(MAGIC)
        count = len(self.slots[slot].split())
        return httpx.Response(200, json={"id_slot": slot, "filename": body["filename"], "n_restored": count})
