"""Tool descriptions and the results of invoking them."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from aeon.domain.provenance import Effect

# What a tool's output failing its output schema derived from a Python return annotation does (tools.output_check):
# `warn` keeps the output and says so, `fail` fails the step, `off` does not check. A declared schema is always checked.
OutputCheck = Literal["warn", "fail", "off"]
OUTPUT_CHECK: OutputCheck = "warn"  # the default: an output not matching its tool's return annotation is kept, said


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What the planner and validator know about a tool: its contract, never its code."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    example: dict[str, Any] = msgspec.field(default_factory=dict)
    # calling it twice with the same arguments is the same as once: a durable run may call it again after a crash
    idempotent: bool = False
    # deterministic and without side effects: a durable run computes it again on replay instead of recording it
    pure: bool = False
    # a person approves each call (with its exact arguments) before it runs
    requires_approval: bool = False
    # where the tool lives: None for a Python tool, else the name of the MCP server (config tools.mcp) serving it
    server: str | None = None
    # output_schema was derived from a Python return annotation, not declared (an MCP outputSchema, @tool(output_schema=
    # ...)): an output that does not match it is the annotation's fault, handled as tools.output_check says
    output_inferred: bool = False
    # what a call does (none/read: any step may call it with any arguments; write/external/None: consequential)
    effect: Effect | None = None
    # whether its output is trusted data: None = undeclared, decided by where it comes from (a Python tool registered
    # by the program: trusted; a tools module's: not; an MCP server's: as config tools.mcp/policy.servers says)
    trusted_output: bool | None = None


class Conversion(msgspec.Struct, frozen=True, kw_only=True):
    """A value in a tool's output that JSON cannot hold as it is, recorded as its full text instead.

    `path` leads from the output to the value (keys and list indexes); `number` says it was a real number
    (Decimal, Fraction, an arbitrary-precision float …), written out without losing a digit.
    """

    path: list[str | int]
    type: str
    number: bool = False

    def note(self) -> str:
        where = ".".join(str(p) for p in self.path) or "output"
        what = "exact text (a JSON number would lose digits)" if self.number else "text"
        if self.number and self.type == "int":  # only an int past Python's limit for numbers as text is converted
            what = "text (it has more digits than Python writes as a number: sys.get_int_max_str_digits())"
        return f"{where}: {self.type} recorded as {what}"


class ToolResult(msgspec.Struct, frozen=True, kw_only=True):
    """A tool's answer. `error` set means the tool failed; the step is marked failed and the plan goes on.

    `cut_at_time_left` says the call was abandoned at the caller's deadline (`time_left`, the run's time cap), not
    at the tool's own timeout: the run is out of time, so it ends there rather than going on to its next step.
    """

    output: Any = None
    error: str | None = None
    converted: list[Conversion] = msgspec.field(default_factory=list)
    cut_at_time_left: bool = False
    # who gave this output instead of the tool ("operator": a durable run's cut-off call marked done by hand)
    supplied_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None
