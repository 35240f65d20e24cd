"""Secret redaction for log records: known secret values anywhere, and credential-named keys whatever they hold."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

REDACTED = "[REDACTED]"
# Header-style names whose values are credentials whatever they contain; compared lower-cased with "-" as "_".
SECRET_KEYS = frozenset(
    {"api_key", "apikey", "x_api_key", "authorization", "proxy_authorization", "password", "access_token"}
)

_KEY_WORDS = ("apikey", "authorization", "password", "accesstoken")
assert all(any(word in key.replace("_", "") for word in _KEY_WORDS) for key in SECRET_KEYS)
# Case folded and "_" and "-" dropped in one pass over the bytes: "X-Api-Key" is searched as "xapikey".
KELVIN = "\u212a"  # the one non-ASCII character str.lower() makes ASCII ("k"), checked in the tests
_KELVIN_RAW = KELVIN.encode()
_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


class Redactor:
    """Finds and replaces secrets. `may_hold` looks at a record's JSON encoding (one folded copy — lower case, "-" and
    "_" dropped — and one C-speed search per needle), so only a record that could hold a secret or a secret-named key
    is walked by `scrub`."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self._ordered = sorted({s for s in secrets if s}, key=len, reverse=True)  # longest first: nested secrets
        needles = {n for secret in self._ordered for n in (secret.encode(), msgspec.json.encode(secret)[1:-1])}
        # Key names as bare words: each one is part of a secret key's name, "_" and "-" dropped ("x_api_key" holds
        # "apikey"), so a record holding a secret-named key always matches; a false alarm only costs a walk.
        needles |= {key.encode() for key in _KEY_WORDS}
        self._needles = tuple({n.translate(_FOLD, b"_-") for n in needles})  # b"" (a secret of "_-"): always walk

    def may_hold(self, encoded: bytes) -> bool:
        blob = encoded.translate(_FOLD, b"_-")
        if any(map(blob.__contains__, self._needles)):  # `needle in blob`, iterated in C: runs on every record
            return True
        # str.lower() makes one non-ASCII character ASCII: the Kelvin sign becomes "k" ("access_to\u212aen" is a
        # secret key), which the byte fold cannot see. Only a line with non-ASCII bytes or an escape can hold it.
        if blob.isascii() and b"\\" not in blob:
            return False
        return _KELVIN_RAW in blob or b"\\u212a" in blob

    def scrub(self, value: Any) -> Any:
        """A copy of the plain JSON tree `value` with every secret value and secret-named key's value REDACTED."""
        if isinstance(value, str):
            for secret in self._ordered:
                value = value.replace(secret, REDACTED)
            return value
        if isinstance(value, dict):
            return {k: REDACTED if _secret_key(k) else self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(item) for item in value]
        return value


def _secret_key(key: object) -> bool:
    return isinstance(key, str) and key.lower().replace("-", "_") in SECRET_KEYS
