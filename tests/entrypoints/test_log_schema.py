"""`aeon schema log` and docs/log.schema.json: the audit log's JSON Schema, generated from the record union, which
the lines of a real run's log satisfy."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from durable_harness import aeon
from typer.testing import CliRunner

from aeon.domain.audit_log import decode_record
from aeon.domain.log_records import LOG_FORMAT_VERSION, UnknownRecord
from aeon.entrypoints.cli import app
from aeon.entrypoints.schema import log_schema_text

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "docs" / "log.schema.json"
runner = CliRunner()


def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SHIPPED.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_shipped_schema_is_the_one_generated_from_the_records() -> None:
    assert SHIPPED.read_text() == log_schema_text(), "run: aeon schema log > docs/log.schema.json"


def test_aeon_schema_log_prints_the_schema_with_its_format_version() -> None:
    result = runner.invoke(app, ["schema", "log"])
    assert result.exit_code == 0
    assert result.stdout == SHIPPED.read_text()
    assert json.loads(result.stdout)["x-aeon-log-format-version"] == LOG_FORMAT_VERSION


@pytest.mark.parametrize("demo", ["two-pass", "malformed-convergence", "approval"])
def test_every_line_a_scripted_run_writes_fits_the_schema_and_reads_as_its_kind(tmp_path: Path, demo: str) -> None:
    log = tmp_path / "run.jsonl"
    config = str(ROOT / "config" / f"scripted-{demo}.yaml")
    args = ["run", "calculate the sum of 5 and 10", "--config", config, "-q", "--json", "--log-file", str(log)]
    if demo == "approval":  # a run that may need a person's decision is durable (it waits on the record)
        aeon(tmp_path, *args)
    else:
        runner.invoke(app, [*args, "--no-durable"])
    lines = log.read_bytes().splitlines()
    check = validator()
    assert len(lines) > 10
    for line in lines:
        errors = [e.message for e in check.iter_errors(json.loads(line))]
        assert not errors, (line[:200], errors[:3])
        assert not isinstance(decode_record(line), UnknownRecord), line[:200]


def test_the_schema_refuses_a_record_of_a_known_kind_in_the_wrong_shape() -> None:
    stamps = {"correlation_id": "r", "seq": 1, "timestamp": "2026-01-01T00:00:00+00:00"}
    good = {"event": "warning", **stamps, "message": "m"}
    check = validator()
    assert check.is_valid(good)
    assert not check.is_valid({**good, "message": 5})
    assert not check.is_valid({**good, "seq": "1"})
    assert not check.is_valid({k: v for k, v in good.items() if k != "timestamp"})
