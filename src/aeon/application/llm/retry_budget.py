"""The retry budget: how many provider requests one unit of phase work (one `ask_json`) can cost at most.

Four layers retry, each wrapped around the one below, so their counts multiply:

| layer              | where (mechanism)                     | tries                   | retried on                    |
|--------------------|---------------------------------------|-------------------------|-------------------------------|
| HTTP attempts      | adapters/llm/_retry.py (tenacity)     | `llm.max_attempts` (3;  | a transient failure (timeout, |
|                    |                                       | the local model: 2)     | reset, 408/429/5xx/529)       |
| gateway rounds     | application/llm/gateway.py            | GATEWAY_ROUNDS (2)      | LLMUnavailable (round failed) |
| supervisor answers | application/llm/supervisor.py         | 1 + MAX_LLM_REPAIRS (3) | an answer off its schema      |
| phase attempts     | application/kernel/phase_runner.py    | PHASE_ATTEMPTS (2)      | a retryable contract failure  |
|                    |                                       |                         | (MALFORMED_PLAN …), never     |
|                    |                                       |                         | LLMUnavailable                |

With the shipped settings:
- an unavailable provider costs a run `unavailable_requests(3)` = 3 × 2 = 6 requests: the gateway's second round is
  the phase contract's one retry, so the phase runner does not repeat it and the run ends at its first LLM call;
- a plan that stays malformed costs `malformed_calls()` = (1 + 2) × 2 = 6 LLM calls;
- the worst unit, each of those calls answered only on the last attempt of its second round, costs
  `worst_requests(3)` = 6 × 6 = 36 requests.
A 400 naming a parameter the model does not take adds one request per such parameter, once per adapter
(adapters/llm/downgrade.py). Every wait in between counts against `run.max_seconds`.
"""

from __future__ import annotations

GATEWAY_ROUNDS = 2
MAX_LLM_REPAIRS = 2
PHASE_ATTEMPTS = 2


def unavailable_requests(http_attempts: int) -> int:
    """Requests one LLM call makes before an unavailable provider ends it (and the run)."""
    return http_attempts * GATEWAY_ROUNDS


def malformed_calls() -> int:
    """LLM calls one unit of phase work makes while every answer stays malformed."""
    return (1 + MAX_LLM_REPAIRS) * PHASE_ATTEMPTS


def worst_requests(http_attempts: int) -> int:
    """Requests one unit of phase work can make at most: every call malformed, each after a failed round."""
    return malformed_calls() * unavailable_requests(http_attempts)
