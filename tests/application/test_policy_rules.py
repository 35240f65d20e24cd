"""The capability policy's rules, one per case: reads are free, a consequential call needs a trusted author and
trusted arguments, the config may widen what untrusted steps may call or relax one argument, or turn it off."""

from __future__ import annotations

from aeon.application.policy import Allowed, NeedsApproval, Policy, ToolRule, decide
from aeon.domain.plan import PlanStep
from aeon.domain.provenance import TRUSTED, Effect, Label
from aeon.domain.tools import ToolSpec

POISONED = Label.of("tool:fetch_page", trusted=False)


def _spec(name: str, effect: Effect | None) -> ToolSpec:
    return ToolSpec(name=name, description="d", input_schema={"type": "object"}, output_schema={}, effect=effect)


def _step(origin: Label = TRUSTED) -> PlanStep:
    return PlanStep(step_id="s2", description="d", tool="t", origin=origin)


def test_a_read_or_pure_tool_may_be_called_by_any_step_with_any_arguments() -> None:
    for effect in (Effect.NONE, Effect.READ):
        assert decide(_step(POISONED), _spec("t", effect), {"q": POISONED}, Policy()) == Allowed()


def test_an_untrusted_step_asks_before_a_consequential_call_naming_where_it_came_from() -> None:
    for effect in (None, Effect.WRITE, Effect.EXTERNAL):
        verdict = decide(_step(POISONED), _spec("send", effect), {}, Policy())
        assert isinstance(verdict, NeedsApproval) and verdict.chain == ("tool:fetch_page",)


def test_a_trusted_step_asks_only_for_an_untrusted_argument_unless_the_config_relaxes_it() -> None:
    spec = _spec("pay", Effect.EXTERNAL)
    assert decide(_step(), spec, {"amount": TRUSTED}, Policy()) == Allowed()
    verdict = decide(_step(), spec, {"recipient": POISONED}, Policy())
    assert isinstance(verdict, NeedsApproval) and "argument recipient" in verdict.reason
    relaxed = Policy(tools={"pay": ToolRule(args={"recipient": "any"})})
    assert decide(_step(), spec, {"recipient": POISONED}, relaxed) == Allowed()


def test_the_config_decides_what_untrusted_steps_may_call_and_may_turn_the_checks_off() -> None:
    read = _spec("search", Effect.READ)
    assert isinstance(decide(_step(POISONED), read, {}, Policy(untrusted_may_call=(Effect.NONE,))), NeedsApproval)
    undeclared = _spec("send", None)
    redeclared = Policy(tools={"send": ToolRule(effect=Effect.READ)})
    assert decide(_step(POISONED), undeclared, {}, redeclared) == Allowed()
    assert decide(_step(POISONED), undeclared, {"to": POISONED}, Policy(enabled=False)) == Allowed()
