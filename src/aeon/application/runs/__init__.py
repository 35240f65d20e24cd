"""The run use case every front door calls (Runs in use_case.py), the rules it follows (rule.py), the DurableRuns
port without a record (in_process.py), the approver a caller answers in its own code (answers.py), a page's
decisions on runs that wait (decisions.py) and `aeon batch`'s queue (batch.py)."""

from aeon.application.plans.edits import edited_problem
from aeon.application.runs.in_process import Execute, InProcessRuns
from aeon.application.runs.recorded import RecordedRuns, approval, denial
from aeon.application.runs.rule import (
    NEEDS_RECORD,
    calls_model,
    capped,
    describe_llm,
    durable_wanted,
    may_need_approval,
    module_names,
    plan_given,
    rebuildable,
    run_overrides,
    said_model,
    scripted_mismatch,
)
from aeon.application.runs.use_case import Checked, Preflight, RunCommand, Runs, Starts, plan_of, plan_text
from aeon.application.schemas import schema_problem

__all__ = [
    "NEEDS_RECORD",
    "Checked",
    "Execute",
    "InProcessRuns",
    "Preflight",
    "RecordedRuns",
    "RunCommand",
    "Runs",
    "Starts",
    "approval",
    "calls_model",
    "capped",
    "denial",
    "describe_llm",
    "durable_wanted",
    "edited_problem",
    "may_need_approval",
    "module_names",
    "plan_given",
    "plan_of",
    "plan_text",
    "rebuildable",
    "run_overrides",
    "said_model",
    "schema_problem",
    "scripted_mismatch",
]
