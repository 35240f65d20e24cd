"""The README's "Costs, caps and traces" commands, run as written (from the repository root)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from cli_harness import assert_exit, invoke

ROOT = Path(__file__).resolve().parents[2]


def section_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Costs, caps and traces", 1)[1].split("\n## ", 1)[0]
    lines = [line for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL) for line in block.splitlines()]
    return [shlex.split(part) for line in lines for part in line.split(" && ")]


def run_as_written(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    assert argv[0] == "aeon"
    monkeypatch.chdir(ROOT)
    # the commands' relative outputs (h.json) and the default log go to a temporary folder, not the checkout
    args = [str(tmp_path / a) if a == "h.json" else a for a in argv[1:]]
    if args[0] == "run":
        args += ["--log-file", str(tmp_path / "runs.jsonl")]
    return invoke(*args)


def test_the_priced_run_and_its_ledger_in_inspect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run, inspect, capped, _traced = section_commands()
    assert_exit(run_as_written(run, tmp_path, monkeypatch), 0)
    history = json.loads((tmp_path / "h.json").read_text())
    assert history["ledger"]["total"]["calls"] == 2 and history["ledger"]["total"]["cost"] == pytest.approx(0.00676)
    out = run_as_written(inspect, tmp_path, monkeypatch)
    assert_exit(out, 0)
    assert "ledger (LLM calls per phase" in out.stdout and "0.006760" in out.stdout  # the total, as the README says

    out = run_as_written(capped, tmp_path, monkeypatch)
    assert_exit(out, 3)
    doc = json.loads(out.stdout)
    assert doc["ttl_expiration"]["cap"] == "max_cost" and doc["budget"]["llm_calls"] == 1
    assert (
        "$0.003580 spent, this call could cost $0.009022 more before LLM call for evaluate"
        in doc["ttl_expiration"]["message"]
    )


def test_the_traced_run_prints_spans_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("opentelemetry.sdk")
    *_, traced = section_commands()
    out = run_as_written(traced, tmp_path, monkeypatch)
    assert_exit(out, 0)
    assert json.loads(out.stdout)["status"] == "completed"
    assert '"name": "invoke_agent aeon"' in out.stderr and '"name": "chat scripted"' in out.stderr
