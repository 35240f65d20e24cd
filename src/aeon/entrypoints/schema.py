"""`aeon schema log`: the JSON Schema of the audit log's records, generated from their union, for users' tooling."""

from __future__ import annotations

import json

import typer

schema_app = typer.Typer(help="Print a JSON Schema Aeon writes to (the audit log).", no_args_is_help=True)


def log_schema_text() -> str:
    """The audit log's JSON Schema as `aeon schema log` prints it and docs/log.schema.json holds it."""
    from aeon.domain.audit_log import log_schema  # on use: `aeon --help` loads no record kinds

    return json.dumps(log_schema(), indent=2, sort_keys=True) + "\n"


@schema_app.command("log")
def log() -> None:
    """The JSON Schema of one JSONL audit-log line (every record kind, by `event`; format version included)."""
    typer.echo(log_schema_text(), nl=False)
