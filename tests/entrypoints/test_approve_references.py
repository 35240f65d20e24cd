"""`aeon approve --args` on a run waiting on the record may pass an earlier step's output by reference: a reference
`aeon validate` would refuse is refused before anything is sent; a good one runs the call with the value."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from durable_harness import aeon, config, records

from multipass import verdict

PUBLISH = '''
import os

from aeon.adapters.tools.decorator import tool


@tool(example={"text": "a"}, requires_approval=True)
def publish(text: str) -> str:
    """Publish text (appended to the effects file); a person approves each call first."""
    with open(os.environ["AEON_TEST_EFFECTS"], "a") as f:
        f.write("published " + text + "\\n")
    return "published " + text
'''
PLAN = {
    "goal": "record, then publish",
    "steps": [
        {"step_id": "s1", "description": "Record the draft", "tool": "record", "args": {"text": "draft"}},
        {"step_id": "s2", "description": "Publish it", "tool": "publish", "args": {"text": "news"}},
    ],
}


def test_approve_args_may_take_an_earlier_output_by_reference(tmp_path: Path) -> None:
    (tmp_path / "publish_tools.py").write_text(PUBLISH)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    cfg = config(tmp_path, "cfg.yaml", {"adapter": "scripted", "script": str(tmp_path / "script.yaml")})
    doc = yaml.safe_load(cfg.read_text())
    doc["tools"]["modules"].append("publish_tools")
    cfg.write_text(yaml.safe_dump(doc))
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"responses": [verdict(True)]}))
    waiting = aeon(tmp_path, "run", "go", "--plan", "plan.json", "--ttl", "1", "--config", cfg, "--json")
    assert waiting.returncode == 6, waiting.stderr
    run_id = json.loads(waiting.stdout)["correlation_id"]

    later = aeon(tmp_path, "approve", run_id, "--args", '{"text": {"$from": "s2"}}', "--config", cfg)
    assert later.returncode == 2 and "takes $from 's2', which does not run before it" in later.stderr
    assert "nothing was sent" in later.stderr
    done = aeon(tmp_path, "approve", run_id, "--args", '{"text": {"$from": "s1"}}', "--config", cfg, "--json")

    assert done.returncode == 0, done.stderr
    assert (tmp_path / "effects.txt").read_text() == "draft\npublished draft\n"
    decided = next(r for r in records(tmp_path / "runs.jsonl", run_id) if r["event"] == "approval_decided")
    assert decided["edited"] is True and decided["args"] == {"text": {"$from": "s1"}}
