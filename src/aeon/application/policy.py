"""The capability policy, checked in code before every tool call: who may call a consequential tool, with what.

A tool with effect none or read may be called by any step with any arguments. A consequential tool (write, external,
or an undeclared effect) needs a trusted decision: the step must come from a trusted author (its `origin`), and each
argument must be trusted unless the config relaxes it (`policy.tools.NAME.args.ARG: any`). Anything else needs a
person's approval — or is refused when nobody can be asked. The config (`policy:`) may redeclare a tool's effect and
whether its output is trusted, and trust an MCP server; `enabled: false` turns the defence off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import msgspec

from aeon.application.errors import ApplicationError
from aeon.domain.plan import PlanStep
from aeon.domain.provenance import TRUSTED, Effect, Label, consequential
from aeon.domain.tools import ToolSpec

ArgRule = Literal["trusted", "any"]


class PolicyRefused(ApplicationError):
    """A tool call the policy lets run only with a person's consent, and nobody could be asked: the call is not
    made, not retried, not repaired or fallen back around; the run ends and reports it."""

    code = "AEON.POLICY.REFUSED"


class ToolRule(msgspec.Struct, frozen=True, kw_only=True):
    """`policy.tools.NAME`: over what the tool declared (None keeps its declaration)."""

    effect: Effect | None = None
    trusted_output: bool | None = None
    args: dict[str, ArgRule] = msgspec.field(default_factory=dict)


class ServerRule(msgspec.Struct, frozen=True, kw_only=True):
    """`policy.servers.NAME`: whether the MCP server's outputs are trusted data (by default they are not)."""

    trusted: bool = False


class Policy(msgspec.Struct, frozen=True, kw_only=True):
    """The `policy:` section as the kernel reads it."""

    enabled: bool = True
    untrusted_may_call: tuple[Effect, ...] = (Effect.NONE, Effect.READ)
    tools: dict[str, ToolRule] = msgspec.field(default_factory=dict)
    servers: dict[str, ServerRule] = msgspec.field(default_factory=dict)

    def effect(self, spec: ToolSpec) -> Effect | None:
        rule = self.tools.get(spec.name)
        return rule.effect if rule is not None and rule.effect is not None else spec.effect

    def output_label(self, spec: ToolSpec) -> Label:
        """The label of what `spec` returns: the config's word, else the tool's, else where it comes from."""
        rule, server = self.tools.get(spec.name), spec.server
        trusted = rule.trusted_output if rule is not None else None
        if trusted is None and server is not None and server in self.servers:
            trusted = self.servers[server].trusted
        if trusted is None:
            trusted = spec.trusted_output is not False
        if trusted:  # only an untrusted value's sources are ever asked for (a chain): a trusted one stays small
            return TRUSTED
        return Label.of(f"mcp:{server}/{spec.name}" if server is not None else f"tool:{spec.name}", trusted=False)


class Allowed(msgspec.Struct, frozen=True):
    """The call may run as it is."""


class NeedsApproval(msgspec.Struct, frozen=True, kw_only=True):
    """The call needs a person's consent: `reason` says why, `chain` names the outputs the decision came from."""

    reason: str
    chain: tuple[str, ...] = ()


ALLOWED = Allowed()


def decide(step: PlanStep, spec: ToolSpec, arg_labels: Mapping[str, Label], policy: Policy) -> Allowed | NeedsApproval:
    """Whether `step` may call `spec` with arguments labelled `arg_labels` (an argument not in it has the step's
    origin: it was written with the step). Pure: no I/O, the same answer for the same inputs."""
    if not policy.enabled:
        return ALLOWED
    effect = policy.effect(spec)
    if not step.origin.trusted and effect not in policy.untrusted_may_call:
        reason = f"step {step.step_id} was written after reading untrusted data and calls {_what(spec, effect)}"
        return NeedsApproval(reason=reason, chain=step.origin.sources)
    if not consequential(effect) or not arg_labels:
        return ALLOWED
    rule = policy.tools.get(spec.name)
    rules = rule.args if rule is not None else {}
    tainted, names = TRUSTED, []
    for name, label in arg_labels.items():
        if not label.trusted and rules.get(name) != "any":
            names.append(name)
            tainted = tainted.join(label)
    if names:
        reason = f"argument {', '.join(names)} of {_what(spec, effect)} comes from untrusted data"
        return NeedsApproval(reason=reason, chain=tainted.sources)
    return ALLOWED


def _what(spec: ToolSpec, effect: Effect | None) -> str:
    return f"tool {spec.name!r} ({effect.value if effect else 'effect undeclared'})"
