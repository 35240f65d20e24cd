"""The context guard: every LLM call's process context is checked against the context-propagation table."""

from __future__ import annotations

from typing import Any

from aeon.application.errors import ContextViolation
from aeon.domain.context import BASE, CONTEXT_SPEC, StageInput, context_of, context_violations
from aeon.domain.phases import Stage
from aeon.domain.run_state import RunState

# Every field a context may hold: the base fields and what some stage's row names. Anything else would be state
# brought in implicitly (the fifth transition invariant), and is a violation.
_KNOWN = frozenset(set(BASE) | {f for rule in CONTEXT_SPEC.values() for f in (*rule.must_have, *rule.prohibited)})


class ContextGuard:
    """Holds the context of the stage now running (its base fields plus the stage's typed inputs) and checks it
    before every LLM call. The context only ever holds references: building it costs nothing."""

    def __init__(self, state: RunState) -> None:
        self._state = state
        self._anchor = {"correlation_id": state.correlation_id, "execution_start_timestamp": state.started_at}
        self.stage = Stage.PROFILE_AND_PLAN
        self.context: dict[str, Any] = {}

    def enter(self, given: StageInput) -> None:
        """Set the context of the stage now running: the base fields plus this stage's typed input."""
        state, stage = self._state, given.stage
        self.stage = stage
        self.context = {
            "request": state.request,
            "pass_number": state.pass_number,
            "phase": stage.phase.value,
            "ttl_remaining": state.budget.ttl_remaining,
            "correlation_id": state.correlation_id,
            "execution_start_timestamp": state.started_at,
            **context_of(given),
        }

    def check(self) -> None:
        """Raise ContextViolation unless the current context satisfies its row of the propagation table."""
        problems = context_violations(
            CONTEXT_SPEC[self.stage], self.context, anchor=self._anchor, request=self._state.request
        )
        problems += [f"{k} is not a context field (implicit state)" for k in self.context if k not in _KNOWN]
        if problems:
            raise ContextViolation(f"phase {self.stage.value} context: {'; '.join(problems)}")
