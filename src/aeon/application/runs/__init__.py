"""The run use case every front door calls (Runs in use_case.py), the rules it follows (rule.py), the DurableRuns
port without a record (in_process.py) and the approver a caller answers in its own code (answers.py)."""

from aeon.application.runs.in_process import Execute, InProcessRuns
from aeon.application.runs.rule import (
    NEEDS_RECORD,
    calls_model,
    capped,
    durable_wanted,
    may_need_approval,
    schema_problem,
    scripted_mismatch,
)
from aeon.application.runs.use_case import Checked, Preflight, RunCommand, Runs, Starts, plan_of, plan_text

__all__ = [
    "NEEDS_RECORD",
    "Checked",
    "Execute",
    "InProcessRuns",
    "Preflight",
    "RunCommand",
    "Runs",
    "Starts",
    "calls_model",
    "capped",
    "durable_wanted",
    "may_need_approval",
    "plan_of",
    "plan_text",
    "schema_problem",
    "scripted_mismatch",
]
