"""The root of Aeon's error tree and the domain's own errors.

AeonError
├── DomainError
│   ├── IllegalTransition        a step status change the state machine forbids
│   └── PlanIntegrityError       a change that would reorder, drop or duplicate steps
└── (application.errors)         port, supervisor, budget and configuration errors
"""

from __future__ import annotations


class AeonError(Exception):
    """Every error Aeon raises on purpose derives from this one."""

    code: str = "AEON.ERROR"


class DomainError(AeonError):
    code = "AEON.DOMAIN"


class IllegalTransition(DomainError):
    code = "AEON.DOMAIN.ILLEGAL_TRANSITION"


class PlanIntegrityError(DomainError):
    code = "AEON.DOMAIN.PLAN_INTEGRITY"
