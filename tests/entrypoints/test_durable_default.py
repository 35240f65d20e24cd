"""`aeon run` is durable by default: with no flag and no set-up, the run is recorded on the SQLite system database
in the working folder; `--no-durable`, `durable.enabled: false` or AEON_DURABLE=false run it in the process only."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from durable_harness import AEON, env, records, runs, scripted

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = yaml.safe_load((ROOT / "config" / "scripts" / "sum-5-and-10.yaml").read_text())["responses"]
REQUEST = "calculate the sum of 5 and 10"


def _run(tmp_path: Path, *args: str | Path, **environ: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AEON, "run", REQUEST, "--json", *map(str, args)],
        cwd=tmp_path,
        env={**env(tmp_path), **environ},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_run_with_no_flag_is_recorded_and_listed(tmp_path: Path) -> None:
    done = _run(tmp_path, "--config", scripted(tmp_path, "demo.yaml", SCRIPT))

    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["correlation_id"]
    assert f"durable run {run_id}" in done.stderr
    assert (tmp_path / ".aeon" / "aeon.sqlite").is_file()  # the default system database, made on the spot
    assert [(r["id"], r["status"]) for r in runs(tmp_path)] == [(run_id, "completed")]


@pytest.mark.parametrize("how", ["--no-durable", "config", "environment"])
def test_a_run_opted_out_is_not_recorded(tmp_path: Path, how: str) -> None:
    cfg = scripted(tmp_path, "demo.yaml", SCRIPT)
    if how == "config":
        doc = yaml.safe_load(cfg.read_text())
        cfg.write_text(yaml.safe_dump({**doc, "durable": {"enabled": False}}))
    flags = ["--no-durable"] if how == "--no-durable" else []
    done = _run(tmp_path, "--config", cfg, *flags, **({"AEON_DURABLE": "false"} if how == "environment" else {}))

    assert done.returncode == 0, done.stderr
    assert "durable run" not in done.stderr and not (tmp_path / ".aeon" / "aeon.sqlite").exists()
    assert json.loads(done.stdout)["outputs"]["s1"]["output"] == 15


def test_a_system_database_that_cannot_be_opened_stops_the_run_before_any_llm_call(tmp_path: Path) -> None:
    cfg = scripted(tmp_path, "demo.yaml", SCRIPT)
    done = _run(tmp_path, "--config", cfg, AEON_DATABASE_URL=f"sqlite:///{tmp_path / 'missing' / 'folder' / 'x.db'}")

    assert done.returncode == 2, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "error" and doc["error"]["code"] == "AEON.DURABLE.DATABASE"
    assert "cannot open the system database" in doc["error"]["message"] and "--no-durable" in doc["error"]["message"]
    assert "Traceback" not in done.stdout + done.stderr
    log = tmp_path / "runs.jsonl"
    assert not log.exists() or not any(r["event"] == "llm_call" for r in records(log))
