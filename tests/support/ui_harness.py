"""A folder of real recorded runs for the `aeon ui` tests, made by the shipped scripted configs (no model), and the
`aeon ui` server started over it as a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from durable_harness import AEON, aeon, env

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"
REQUEST = "calculate the sum of 5 and 10"
# What a hostile tool output and request hold: markup and a script link that must show as text, and a credential
# the run did not know as a secret (its process had no such variable) but `aeon ui` does: it must not be shown.
HOSTILE = "<script>document.title='pwned'</script> <a href=\"javascript:alert('pwned')\">click me</a>"
SECRET = "ghp_UiTestSecret0123456789"
HOSTILE_REQUEST = "show <img src=x onerror=alert('pwned')> as text"


@dataclass
class Recorded:
    """The folder and the ids of its runs by what they show."""

    folder: Path
    ids: dict[str, str] = field(default_factory=dict)
    awaiting: list[str] = field(default_factory=list)
    batch: str = ""


def _run_id(done: subprocess.CompletedProcess[str]) -> str:
    found = re.search(r"durable run (\S+) ", done.stderr)
    assert found is not None, done.stderr
    return found.group(1)


def _ran(folder: Path, *args: str | Path, code: int = 0) -> str:
    done = aeon(folder, "run", *args)
    assert done.returncode == code, done.stderr
    return _run_id(done)


def fill(folder: Path, *, awaiting: int = 3) -> Recorded:
    """Real runs on the folder's system database: converged, two-pass, TTL-expired, a hostile one, `awaiting` runs
    waiting for approval, and a batch of three."""
    out = Recorded(folder)
    out.ids["converged"] = _ran(folder, REQUEST, "--config", CONFIG / "scripted-demo.yaml")
    out.ids["two_pass"] = _ran(folder, REQUEST, "--config", CONFIG / "scripted-two-pass.yaml")
    expired = ("--config", CONFIG / "scripted-never-converges.yaml", "--ttl", "1")
    out.ids["ttl_expired"] = _ran(folder, REQUEST, *expired, code=3)
    out.ids["hostile"] = _hostile(folder)
    for _ in range(awaiting):
        approval = ("--config", CONFIG / "scripted-approval.yaml", "--json")
        out.awaiting.append(_ran(folder, "publish the release notes", *approval, code=6))
    batch = (CONFIG / "batch-sums.jsonl", "--config", CONFIG / "scripted-demo.yaml", "--out", "r.jsonl")
    done = aeon(folder, "batch", *batch)
    assert done.returncode == 0, done.stderr
    out.batch = json.loads((folder / "r.jsonl").read_text().splitlines()[0])["run_id"].split("-")[1]
    return out


def _hostile(folder: Path) -> str:
    """A run whose request and tool output hold markup, a script link and a credential (no LLM call is made)."""
    step = {"step_id": "s1", "description": "Echo it", "tool": "echo", "args": {"text": f"{HOSTILE} {SECRET}"}}
    (folder / "hostile-plan.json").write_text(json.dumps({"goal": "echo", "steps": [step]}))
    (folder / "empty-script.yaml").write_text(yaml.safe_dump({"responses": []}))
    doc = {"llm": {"adapter": "scripted", "script": str(folder / "empty-script.yaml")}, "run": {"evaluate": False}}
    (folder / "hostile.yaml").write_text(yaml.safe_dump(doc))
    return _ran(folder, HOSTILE_REQUEST, "--plan", "hostile-plan.json", "--ttl", "1", "--config", "hostile.yaml")


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    lines: list[str]

    def stop(self) -> str:
        """Stop it as Ctrl-C does; return what it said on stderr."""
        self.process.send_signal(2)
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return "".join(self.lines) + err


def start(folder: Path, *args: str, extra_env: dict[str, str] | None = None) -> Server:
    """`aeon ui --port 0 ARGS` in `folder`, once it says where it listens."""
    environment = {**env(folder), **(extra_env or {})}
    process = subprocess.Popen(
        [*AEON, "ui", "--port", "0", *args], cwd=folder, env=environment, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
        found = re.search(r"ui on (http://\S+/)", line)
        if found:
            if not any(name in found.group(1) for name in ("127.0.0.1", "[::1]", "localhost")):
                lines.append(process.stderr.readline())  # the line with the token follows
            return Server(process, found.group(1).rstrip("/"), lines)
    process.kill()
    raise AssertionError("aeon ui did not start: " + "".join(lines) + (process.stderr.read() or ""))
