"""`aeon replay RUN_ID --from-pass N --config FILE` forks a durable run at a pass boundary: the passes before are
the record's (no call is sent again), pass N onward is answered by the new config; both runs stay listed."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from durable_harness import aeon, config, records, runs

ROOT = Path(__file__).resolve().parents[2]
REQUEST = "calculate the sum of 5 and 10"
CONVERGED = {"completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "ok", "issues": []}
PASS_2 = ["The total is fifteen.", json.dumps(CONVERGED)]  # the added step, then the one evaluation call


def _config(tmp_path: Path, name: str, responses: list[str]) -> Path:
    script = tmp_path / f"{name}.script.yaml"
    script.write_text(yaml.safe_dump({"responses": responses}))
    return config(tmp_path, name, {"adapter": "scripted", "script": str(script)}, ttl=3)


def test_replay_from_pass_2_reuses_pass_1_and_answers_with_the_new_config(tmp_path: Path) -> None:
    two_pass = yaml.safe_load((ROOT / "config/scripts/two-pass.yaml").read_text())["responses"]
    original = aeon(tmp_path, "run", REQUEST, "--config", _config(tmp_path, "a.yaml", two_pass), "--durable", "--json")
    assert original.returncode == 0, original.stderr
    first = json.loads(original.stdout)
    assert first["passes"] == 2 and first["answer"] == "The sum is 15."

    # The new script holds only pass 2's two answers: one call of pass 1 sent again would take the wrong answer
    # and the script would run out (ScriptExhausted), failing the run.
    replayed = aeon(
        tmp_path, "replay", first["correlation_id"], "--from-pass", "2",
        "--config", _config(tmp_path, "b.yaml", PASS_2), "--json",
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr
    second = json.loads(replayed.stdout)
    assert second["correlation_id"] != first["correlation_id"]
    assert second["passes"] == 2 and second["answer"] == "The total is fifteen."
    assert second["outputs"]["s1"] == first["outputs"]["s1"]  # pass 1's tool result, from the record
    assert second["budget"]["llm_calls"] == first["budget"]["llm_calls"]  # 4 recorded + 2 new
    log = records(tmp_path / "runs.jsonl", second["correlation_id"])
    assert [r["event"] for r in log].count("llm_call") == len(PASS_2)  # only pass 2's calls were made
    assert log[0]["event"] == "run_forked" and log[0]["source"] == first["correlation_id"]
    assert [r["seq"] for r in log] == list(range(len(log)))

    listed = {r["id"]: r for r in runs(tmp_path)}
    assert set(listed) == {first["correlation_id"], second["correlation_id"]}
    assert listed[second["correlation_id"]]["replay_of"] == first["correlation_id"]
    assert all(r["status"] == "completed" for r in listed.values())


def test_replay_names_a_missing_pass_and_an_unknown_run(tmp_path: Path) -> None:
    demo = yaml.safe_load((ROOT / "config/scripts/sum-5-and-10.yaml").read_text())["responses"]
    done = aeon(tmp_path, "run", REQUEST, "--config", _config(tmp_path, "a.yaml", demo), "--durable", "--json")
    run_id = json.loads(done.stdout)["correlation_id"]
    missing = aeon(tmp_path, "replay", run_id, "--from-pass", "4")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines()[-1] == (
        f"aeon: run {run_id} has no pass 4 to replay from (it reached 1 pass(es))"
    )
    unknown = aeon(tmp_path, "resume", "no-such-run")
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == "aeon: unknown run id 'no-such-run' (aeon runs lists the recorded runs)"
