"""The retry policy of the official OpenAI and Anthropic Python SDKs, on tenacity."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from functools import partial
from typing import NoReturn, ParamSpec, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt, wait_exponential
from tenacity.wait import wait_base

from aeon.application.errors import LLMTooSlow, LLMTransient, LLMUnavailable
from aeon.application.ports import LoggerPort
from aeon.domain.log_llm import LLMGiveupRecord, LLMRetryRecord
from aeon.domain.log_records import LogRecord

P = ParamSpec("P")
T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

# The SDKs' numbers, so a provider sees the client it expects.
INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 60.0


def _failure(state: RetryCallState) -> LLMTransient:
    """The error of the attempt just failed: retry_if_exception_type lets no other error reach the policy hooks."""
    failure = state.outcome.exception() if state.outcome is not None else None
    assert isinstance(failure, LLMTransient)
    return failure


class RetryAfterOrBackoff(wait_base):
    """Honour a sane server wait (0 < wait <= 60 s), else 0.5 s doubling to 8 s, scaled by a jitter in (0.75, 1]."""

    def __init__(self, random: Callable[[], float]) -> None:
        self._random = random
        self._backoff = wait_exponential(multiplier=INITIAL_BACKOFF, max=MAX_BACKOFF)

    def __call__(self, retry_state: RetryCallState) -> float:
        retry_after = _failure(retry_state).retry_after
        if retry_after is not None and math.isfinite(retry_after) and 0 < retry_after <= MAX_RETRY_AFTER:
            return retry_after
        # The SDKs shrink the backoff by up to a quarter; tenacity's jitter waits add to it or draw it whole.
        return self._backoff(retry_state) * (1 - 0.25 * self._random())


class RetryPolicy:
    """Runs an attempt until it succeeds, fails for good or has failed `max_attempts` times.

    Only LLMTransient is retried; any other error escapes at once. Each wait goes through `sleep`, is logged as
    `llm_retry` and announced on `status`. Raises LLMUnavailable, logged as `llm_giveup`, when the last allowed
    attempt fails transiently.
    """

    def __init__(
        self,
        *,
        max_attempts: int,
        sleep: Sleep,
        random: Callable[[], float],
        logger: LoggerPort | None = None,
        status: Callable[[str], None] | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.max_attempts = max_attempts
        self._sleep = sleep
        self._logger = logger
        self._status = status
        self._stop = stop_after_attempt(max_attempts)
        self._wait = RetryAfterOrBackoff(random)
        self._retry = retry_if_exception_type(LLMTransient)

    async def run(self, attempt: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        waits: list[float] = []
        # A fresh AsyncRetrying per call, as tenacity's own decorator does: it keeps a call's progress on the instance
        # (thread-local, so shared by every coroutine of the loop), and the waits reported must be this call's.
        retrying = AsyncRetrying(
            sleep=self._sleep,
            stop=self._stop,
            wait=self._wait,
            retry=self._retry,
            before_sleep=partial(self._before_sleep, waits),
            retry_error_callback=partial(self._give_up, waits),
        )
        # The code-block form rather than `await retrying(attempt)`: a success returns before tenacity stores and
        # re-checks the outcome, which saves about a third of its cost per request (bench/http_post.py).
        async for trial in retrying:
            with trial:
                return await attempt(*args, **kwargs)
        raise AssertionError("unreachable: _give_up raises once the attempts are spent")

    def _before_sleep(self, waits: list[float], state: RetryCallState) -> None:
        failure, attempt, wait = _failure(state), state.attempt_number, state.upcoming_sleep
        cause = str(failure)
        waits.append(wait)
        self._emit(LLMRetryRecord(attempt=attempt, cause=cause, status=failure.status, wait_seconds=wait))
        if self._status is not None:
            self._status(f"{cause} from the provider: attempt {attempt + 1} of {self.max_attempts} in {wait:.1f} s")

    def _give_up(self, waits: list[float], state: RetryCallState) -> NoReturn:
        failure, attempts = _failure(state), state.attempt_number
        cause = str(failure)
        self._emit(LLMGiveupRecord(attempts=attempts, cause=cause, status=failure.status, waits=waits))
        waited = f"; waited {', '.join(f'{w:.1f} s' for w in waits)}" if waits else ""
        # the last attempt decides: a model that answered nothing in time is slow, not down
        kind, what = (LLMTooSlow, "answers too slow") if failure.slow else (LLMUnavailable, "provider unavailable")
        raise kind(
            f"{what} after {attempts} attempt{'' if attempts == 1 else 's'} ({cause}{waited})",
            status=failure.status,
            attempts=attempts,
            cause=cause,
            waits=tuple(waits),
            retry_after=failure.retry_after,
        ) from failure

    def _emit(self, record: LogRecord) -> None:
        if self._logger is not None:
            self._logger.emit(record)
