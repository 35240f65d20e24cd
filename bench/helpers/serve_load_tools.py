"""The side-effect tool of the load bench (config/scripted-load.yaml, bench/serve_load.py): `tally` appends one line
to tally.txt in the working folder and returns the line's token, so that each execution is counted and tied to the
run that recorded its output. It is not idempotent: a durable run never runs it again blindly after a crash."""

from __future__ import annotations

import os
import uuid

from aeon.adapters.tools import tool

TALLY = "tally.txt"


@tool(example={"label": "visit"}, effect="write")
def tally(label: str) -> str:
    """Count one visit: append a line `TOKEN LABEL` to tally.txt in the working folder; returns the token."""
    token = uuid.uuid4().hex
    fd = os.open(TALLY, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{token} {label}\n".encode())  # one write on an O_APPEND file: processes never interleave
    finally:
        os.close(fd)
    return token
