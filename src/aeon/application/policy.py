"""The capability policy, checked in code before every tool call: who may call a consequential tool, with what.

A tool with effect none or read may be called by any step with any arguments. A consequential tool (write, external,
or an undeclared effect) needs a trusted decision: the step must come from a trusted author (its `origin`), and each
argument must be trusted unless the config relaxes it (`policy.tools.NAME.args.ARG: any`). Anything else needs a
person's approval — or is refused when nobody can be asked. The config (`policy:`) may redeclare a tool's effect and
whether its output is trusted, and trust an MCP server; `enabled: false` turns the defence off.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import msgspec

from aeon.application.errors import ApplicationError
from aeon.domain.plan import PlanStep
from aeon.domain.provenance import TRUSTED, Effect, Label, consequential, descriptions_of
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

    def trusts_description(self, spec: ToolSpec) -> bool:
        """Whether `spec`'s description is the config's word: a tool of an MCP server whose outputs the policy does
        not trust has a description from outside too (fenced and bounded in every prompt, and it labels the steps
        a prompt holding it writes: `Described`)."""
        return spec.server is None or self.output_label(spec).trusted


class Described:
    """What the tool descriptions in every prompt make of the steps a prompt writes (the plan, a refinement, a
    repair). A step written from a prompt that held an untrusted MCP server's descriptions is labelled as having read
    them — unless it calls one of that server's own tools: a server may always steer calls to itself, that is the
    trust the user gave it by configuring it; a call to any other consequential tool needs consent like any untrusted
    step's."""

    def __init__(self, specs: Sequence[ToolSpec] = (), policy: Policy | None = None) -> None:
        policy = policy or Policy()
        self._server_of = {t.name: t.server for t in specs}
        self._labels = {
            t.server: Label.of(descriptions_of(t.server), trusted=False)
            for t in specs
            if t.server is not None and not policy.trusts_description(t)
        }

    def label(self, step: PlanStep) -> Label:
        """The label `step`'s author gave it by reading the descriptions: every untrusted server's but its tool's."""
        own = self._server_of.get(step.tool) if step.tool is not None else None
        out = TRUSTED
        for server, label in self._labels.items():
            if server != own:
                out = out.join(label)
        return out

    def mark(self, steps: Iterable[PlanStep]) -> None:
        """Label `steps`, written from a prompt holding the descriptions (their origin joins what they read)."""
        if self._labels:
            for step in steps:
                step.origin = step.origin.join(self.label(step))


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
