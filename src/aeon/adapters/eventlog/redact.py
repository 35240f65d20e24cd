"""Secret redaction for log records: known secret values anywhere, and credential-named keys whatever they hold."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from structlog.typing import EventDict, WrappedLogger

REDACTED = "[REDACTED]"
# Header-style names whose values are credentials whatever they contain; compared lower-cased with "-" as "_".
SECRET_KEYS = frozenset(
    {"api_key", "apikey", "x_api_key", "authorization", "proxy_authorization", "password", "access_token"}
)


def redactor(secrets: Sequence[str]) -> Callable[[WrappedLogger, str, EventDict], EventDict]:
    """A structlog processor turning the record into plain JSON values with every secret replaced by REDACTED."""
    ordered = sorted({s for s in secrets if s}, key=len, reverse=True)  # longest first: a secret inside another

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            for secret in ordered:
                value = value.replace(secret, REDACTED)
            return value
        if isinstance(value, dict):
            return {k: REDACTED if _secret_key(k) else scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(item) for item in value]
        return value

    # Fast path: a record is walked only when its encoded form could hold a secret or a secret-named key.
    needles = [n for secret in ordered for n in (secret.encode(), msgspec.json.encode(secret)[1:-1])]
    needles += [f'"{k}"'.encode() for key in SECRET_KEYS for k in {key, key.replace("_", "-")}]

    def redact(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
        # Structs, enums, datetimes … become plain JSON values first, so nested secrets are reachable. The result
        # is a fresh tree of dicts and lists, which later processors may change in place.
        plain: EventDict = msgspec.to_builtins(event_dict, enc_hook=str, str_keys=True)
        blob = msgspec.json.encode(plain).lower()
        if any(n.lower() in blob for n in needles):
            plain = scrub(plain)
        return plain

    return redact


def _secret_key(key: object) -> bool:
    return isinstance(key, str) and key.lower().replace("-", "_") in SECRET_KEYS
