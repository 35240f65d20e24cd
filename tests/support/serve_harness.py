"""`aeon serve` started as a subprocess in a folder of its own (port 0: the port it printed), and an HTTP client."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from durable_harness import AEON, env

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"
REQUEST = "calculate the sum of 5 and 10"


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    folder: Path
    lines: list[str]

    def client(self, base_url: str | None = None) -> httpx.Client:
        return httpx.Client(base_url=base_url or self.url, timeout=60)

    def stop(self) -> str:
        """Stop it as Ctrl-C does; return what it said on stderr."""
        self.process.send_signal(2)
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return "".join(self.lines) + err


def start(folder: Path, *args: str | Path, extra_env: dict[str, str] | None = None) -> Server:
    """`aeon serve --port 0 ARGS` in `folder`, once it says where it listens."""
    environment = {**env(folder), **(extra_env or {})}
    process = subprocess.Popen(
        [*AEON, "serve", "--port", "0", *map(str, args)], cwd=folder, env=environment, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert process.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
        found = re.search(r"serving on (http://\S+/)", line)
        if found:
            return Server(process, found.group(1).rstrip("/"), folder, lines)
    process.kill()
    raise AssertionError("aeon serve did not start: " + "".join(lines) + (process.stderr.read() or ""))
