"""Every door's durable start is one call on the DurableRuns port (adapters/durable/starts.DurableStart), and the run
it starts is the run the use case named: its id is the result's, the log's and the record's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import aeon

SCRIPT = """
import json
from aeon.adapters.durable.starts import DurableStart, Recorded
from aeon.entrypoints.api_options import overrides_of
from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.durable.factory import process

overrides = overrides_of({"model": "scripted:script.yaml", "log_file": "runs.jsonl"})
overrides |= {"tools.modules": ["named_run_tools"], "run.evaluate": False}
settings = load_settings(None, overrides)
start = DurableStart(process(), Recorded(settings, None, overrides), threaded=False)
result = start.start("the-use-cases-id", "what is the weather in Paris?")
print(json.dumps({"id": result.correlation_id, "status": result.status}))
"""

TOOLS = '''
import aeon


@aeon.tool(idempotent=True)
def weather(city: str) -> str:
    """Today's weather for a city."""
    return f"sunny in {city}"
'''

STEP = {"step_id": "s1", "description": "Look it up", "tool": "weather", "args": {"city": "Paris"}}


def test_a_durable_run_is_the_run_the_use_case_named(tmp_path: Path) -> None:
    from durable_harness import env, runs

    from cli_harness import records

    (tmp_path / "named_run_tools.py").write_text(TOOLS)
    (tmp_path / "script.yaml").write_text(json.dumps({"responses": [json.dumps({"goal": "g", "steps": [STEP]})]}))
    (tmp_path / "main.py").write_text(SCRIPT)
    source = Path(aeon.__file__).parents[1]
    environ = {**env(tmp_path), "PYTHONPATH": f"{tmp_path}{os.pathsep}{source}"}
    proc = subprocess.run(
        [sys.executable, "main.py"], cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120
    )

    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"id": "the-use-cases-id", "status": "completed"}
    assert [(r["id"], r["status"]) for r in runs(tmp_path)] == [("the-use-cases-id", "completed")]
    assert {r["correlation_id"] for r in records(tmp_path / "runs.jsonl")} == {"the-use-cases-id"}
