"""Every check made before a run may spend anything is made on every path: `aeon run` (durable, the default, and
--no-durable), the Python API (durable or not), `aeon batch` and `aeon mcp` (durable or not) refuse a log that
takes no record, a tools module that does not load, a system database that cannot be opened and a model that
cannot run here — each with its one-line error and no request sent to the (counting) OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from durable_harness import AEON, SRC
from fake_provider import FakeProvider, serving
from mcp import ClientSession, StdioServerParameters, stdio_client

REQUEST = "calculate the sum of 5 and 10"
KEY = "test-key-preflight-0123456789"
PLAN = {"steps": [{"step_id": "s1", "description": "sum", "tool": "calculator", "args": {"expression": "5+10"}}]}

# refusal: (config sections, what the one-line error says, whether only a durable run meets it)
REFUSALS: dict[str, tuple[dict[str, Any], str, bool]] = {
    "log": ({"log": {"path": "/dev/full"}}, "cannot write the event log /dev/full: No space left on device", False),
    "tools": ({"tools": {"modules": ["broken_tools"]}}, "broken_tools", False),
    "database": ({"durable": {"database_url": "sqlite:///missing/folder/x.db"}}, "system database", True),
    "model": ({"llm": {"adapter": "local"}}, "[local]", False),
}


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    with serving(FakeProvider([json.dumps({"profile": {}, "plan": PLAN})] * 10)) as fake:
        yield fake


def _folder(tmp_path: Path, provider: FakeProvider, refusal: str) -> Path:
    if refusal == "log" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    if refusal == "model":
        from aeon.adapters.llm._llama_server import missing_install

        if missing_install(None, None) is None:
            pytest.skip("the [local] extra is installed here: the local model can run")
    sections, _, _ = REFUSALS[refusal]
    data: dict[str, Any] = {
        "llm": {"adapter": "openai", "base_url": provider.url, "model": "fake", "api_key": "${OPENAI_API_KEY:}"},
        "log": {"path": str(tmp_path / "runs.jsonl")},
        "run": {"evaluate": False},
    }
    for key, value in sections.items():
        data[key] = {**data[key], **value} if key in data else value
    (tmp_path / "aeon.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    (tmp_path / "broken_tools.py").write_text("raise RuntimeError('this module does not load')\n", encoding="utf-8")
    (tmp_path / "batch.jsonl").write_text(json.dumps({"request": REQUEST}) + "\n", encoding="utf-8")
    return tmp_path


def _env(folder: Path) -> dict[str, str]:
    """No AEON_* variable of the suite's (durable is the default again), the test's folder for its modules."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AEON_") and not k.endswith("_API_KEY")}
    return {**clean, "OPENAI_API_KEY": KEY, "PYTHONPATH": os.pathsep.join([str(SRC), str(folder)])}


def _command(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AEON, *args], cwd=folder, env=_env(folder), capture_output=True, text=True, timeout=120, check=False
    )


API = """
import sys, aeon
try:
    aeon.run(sys.argv[1], config="aeon.yaml", durable=sys.argv[2] == "durable")
except aeon.AeonError as exc:
    print(f"{exc.code}: {exc}")
    sys.exit(2)
print("ran")
"""


def _refused(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in done.stdout + done.stderr, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def _doors(refusal: str) -> list[str]:
    durable_only = REFUSALS[refusal][2]
    plain = ["run --no-durable", "api plain", *([] if refusal == "tools" else ["mcp plain"])]  # mcp: at start
    return ["run", "api durable", "batch", "mcp durable", *([] if durable_only else plain)]


CASES = [(refusal, door) for refusal in REFUSALS for door in _doors(refusal)]


@pytest.mark.parametrize(("refusal", "door"), CASES, ids=[f"{r}-{d.replace(' ', '-')}" for r, d in CASES])
def test_each_front_door_refuses_before_the_first_llm_request(
    tmp_path: Path, provider: FakeProvider, refusal: str, door: str
) -> None:
    folder = _folder(tmp_path, provider, refusal)
    says = REFUSALS[refusal][1]
    before = provider.requests
    kind, _, how = door.partition(" ")

    if kind == "run":
        _refused(_command(folder, "run", REQUEST, "--config", "aeon.yaml", "--quiet", *how.split()), says)
    elif kind == "api":
        done = subprocess.run(
            [sys.executable, "-c", API, REQUEST, how],
            cwd=folder, env=_env(folder), capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        _refused(done, says)
    elif kind == "batch":
        _refused(_command(folder, "batch", "batch.jsonl", "--config", "aeon.yaml"), says)
        assert not (folder / "batch.results.jsonl").exists()
    elif refusal == "tools":  # `aeon mcp` loads the config's tools at start: it serves nothing then
        _refused(_command(folder, "mcp", "--config", "aeon.yaml"), says)
    else:
        result = anyio.run(_mcp_run, folder, how == "durable")
        assert result.is_error, result
        assert says in result.content[0].text  # type: ignore[union-attr]

    assert provider.requests == before, f"{provider.requests - before} LLM requests were sent"
    if refusal == "log":  # a durable run that never started is not left on the record
        listed = _command(folder, "runs", "--json")
        assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stdout + listed.stderr


async def _mcp_run(folder: Path, durable: bool) -> Any:
    params = StdioServerParameters(
        command=AEON[0], args=[*AEON[1:], "mcp", "--config", "aeon.yaml"], env=_env(folder), cwd=folder
    )
    with (folder / "stderr.txt").open("w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await client.call_tool("run", {"request": REQUEST, "durable": durable})
