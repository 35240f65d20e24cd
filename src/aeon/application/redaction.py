"""The one redaction policy for everything a run lets out: the log, results, progress, spans, prompts and records.

Three kinds of secret are blanked to REDACTED: (a) the configured secret values (API keys, passwords in URLs,
secret-named environment values: the entrypoints gather them) wherever they appear, inside longer strings and in
their JSON-escaped forms too; (b) every value under a secret-named key (SECRET_KEYS, and upper-cased names such as
`GITHUB_TOKEN` or `PGPASSWORD`); (c) credential-shaped text inside strings: `Authorization: Bearer …`,
`Bearer <token>`, `api_key=…`, `token: …`, `"password": "…"`, `DB_PASSWORD=…`, the password of a URL
(`https://user:…@host`) and well-known token shapes (GitHub `ghp_…`/`github_pat_…`, AWS `AKIA…`, `sk-…` keys,
Slack `xox?-…`, JWTs). Pure: built once per run from the secret values, no I/O.
Two strengths of the one policy: the full one for every durable or shared sink (the log, the record, --history),
and `for_caller()`, which blanks only (a), for the copy of a result handed back to the process that ran it (what the
run itself produced, a token a tool returned, reaches its caller whole; a configured key never does).
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable
from typing import Any, TypeVar

import ahocorasick_rs
import msgspec

REDACTED = "[REDACTED]"
MIN_INSIDE = 8  # a configured secret shorter than this is blanked only where it is a whole value
# Names whose values are credentials whatever they hold; compared lower-cased with "-" as "_".
SECRET_KEYS = frozenset(
    {
        *("api_key", "apikey", "x_api_key", "authorization", "proxy_authorization", "password"),
        *("token", "access_token", "refresh_token", "auth_token", "id_token", "x_auth_token"),
        *("secret", "client_secret", "secret_key", "private_key"),
    }
)
# Each secret key's name, "_" and "-" dropped, holds one of these words, so `may_hold` never misses a secret key
# ("token" is searched for apart: "tokens", in every usage record, must not count).
_KEY_WORDS = ("apikey", "authorization", "password", "passwd", "secret", "privatekey", "bearer", "credential")
assert all(any(w in k.replace("_", "") for w in (*_KEY_WORDS, "token")) for k in SECRET_KEYS)
# An upper-cased name (an environment variable's, as tools and configs print them) that says it holds a credential:
# GITHUB_TOKEN, OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, PGPASSWORD, SLACK_CREDENTIALS; not MAX_TOKENS.
_UPPER_NAME = r"[A-Z0-9_]*(?:API_?KEY|TOKEN(?!S)|SECRET|PASSW(?:OR)?D|CREDENTIALS?|PRIVATE_?KEY)[A-Z0-9_]*"
_UPPER_SECRET = re.compile(rf"{_UPPER_NAME}\Z")
_UPPER_KEYED = re.compile(
    rf"(?<![A-Za-z0-9_])(?P<key>{_UPPER_NAME})(?P<sep>\\?[\"']?\s*[:=]\s*\\?[\"']?)(?P<value>[^\s\"'\\&,;]+)"
)
# The password of a URL: scheme://user:PASSWORD@host (a port has no "@" after it).
_URL_PASSWORD = re.compile(r"(?P<key>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*)(?P<sep>:)(?P<value>[^\s/?#@]+)(?=@)")
# Token shapes that are credentials wherever they appear, configured or not; anchored on both sides so that a word
# holding "sk-" ("task-list", "disk-usage") or a short id is left alone, and an `sk-` key must hold a digit.
_SHAPED = re.compile(
    r"(?<![A-Za-z0-9_-])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})(?![A-Za-z0-9_-])"
)
# What the byte check looks for, unfolded, for the shapes whose folded prefix is too common a word to search for.
# "://" is searched with the folded needles (folding keeps it, and may only make more of it); "sk-" apart (folded,
# "sk" is in every "task").
_RAW_NEEDLES = (b"sk-", b"://")
_SK = _RAW_NEEDLES[0]
_SHAPE_NEEDLES = (b"ghp", b"gho", b"ghu", b"ghs", b"ghr", b"githubpat", b"akia", b"asia", b"xox", b"eyj")
KELVIN = "\u212a"  # the one non-ASCII character str.lower() makes ASCII ("k"), checked in the tests
_KELVIN_RAW = KELVIN.encode()
_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
_FOLDED_WORDS = frozenset(
    w.translate(_FOLD, b"_-") for w in (*(k.encode() for k in _KEY_WORDS), *_SHAPE_NEEDLES, b"://")
)
# "token" counts only when not followed by "s" ("tokens", in every usage record, must not count)
_TOKEN, _PLURAL = b"token", b"s"
_CUT = b'{"}]'  # no needle holding one of these bytes reaches across a JSON object's braces (scans_objects_apart)
# (c): a credential-named word (not inside a longer word: "max_tokens" is not "token"), an optional closing quote
# (escaped too: JSON text inside JSON text), ":" or "=", an optional opening quote, then the value, an auth scheme
# ("Bearer …") included. "api-key", "X_API_KEY" and "access_token" all match.
_KEYED = re.compile(
    r"(?<![A-Za-z0-9])(?P<key>(?:api[-_]?key|authorization|password|token|secret(?:[-_]?(?:access[-_]?)?key)?"
    r"|private[-_]?key))(?P<sep>\\?[\"']?\s*[:=]\s*\\?[\"']?)(?P<value>(?<=[\"'])[^\"'\\\n]+"
    r"|(?:(?:bearer|basic|token|digest)\s+)?[^\s\"'\\&,;]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?<![A-Za-z0-9])(?P<key>bearer)(?P<sep>\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})", re.IGNORECASE)

T = TypeVar("T")


def secret_key(key: object) -> bool:
    """True for a key whose value is a credential whatever it holds ("Authorization", "X-Api-Key", "token",
    "GITHUB_TOKEN")."""
    if not isinstance(key, str):
        return False
    return key.lower().replace("-", "_") in SECRET_KEYS or (key.isupper() and _UPPER_SECRET.match(key) is not None)


def _blank(match: re.Match[str]) -> str:
    return f"{match['key']}{match['sep']}{REDACTED}"


class Redactor:
    """Finds and replaces secrets. `may_hold` looks at bytes (one folded copy — lower case, "-" and "_" dropped —
    searched for every needle in one pass), so only data that could hold a secret is walked by `scrub` or `text`."""

    def __init__(self, secrets: Iterable[str] = (), *, configured_only: bool = False) -> None:
        self._secrets = values = {s for s in secrets if s and s != REDACTED}
        self._configured_only = configured_only
        # a short secret ("k") is blanked only as a whole value: inside longer text it would garble every word
        # holding it, JSON key names too (the document would no longer decode)
        self._whole = {s for s in values if len(s) < MIN_INSIDE}
        # longest first (a secret inside another), each in its JSON-escaped and twice-escaped forms too
        forms = {f for s in values - self._whole for f in _escaped_forms(s)}
        self._ordered = sorted(forms, key=len, reverse=True)
        needles = {form.encode("utf-8", "surrogatepass") for form in forms}
        folded = {n.translate(_FOLD, b"_-") for n in needles} | _FOLDED_WORDS
        self._walk = b"" in folded  # a secret made only of "_" and "-": every text is walked
        self._needles = _Needles.of(frozenset(folded - {b""}))
        self._cut = not any(b in n for n in (*needles, *folded, *_RAW_NEEDLES) for b in _CUT)
        self._caller: Redactor | None = None

    def for_caller(self) -> Redactor:
        """The same configured secrets, and nothing else: for the result the run's own caller gets back."""
        if self._caller is None:  # made once, with the same needles
            self._caller = copy.copy(self)
            self._caller._configured_only, self._caller._caller = True, None
        return self._caller

    @property
    def scans_objects_apart(self) -> bool:
        """True when a JSON object inside a document may be scanned apart from the rest, with the verdict of a scan of
        the whole: no needle holds a byte of `{"}]` (none reaches across braces), no short secret makes it "walk"."""
        return self._cut and not self._whole

    def may_hold(self, encoded: bytes) -> bool:
        """False when the bytes (a JSON encoding or a text) cannot hold a secret value, key or credential text."""
        if self._whole or self._walk:  # a short secret: walk to find whole values
            return True
        if _SK_IN(encoded):
            return True
        blob = encoded.translate(_FOLD, b"_-")
        if self._needles.found(blob):
            return True
        # str.lower() makes one non-ASCII character ASCII: the Kelvin sign becomes "k" ("access_to\u212aen" is a
        # secret key), which the byte fold cannot see. Only data with non-ASCII bytes or an escape can hold it.
        if blob.isascii() and b"\\" not in blob:
            return False
        return _KELVIN_RAW in blob or b"\\u212a" in blob

    def text(self, value: str) -> str:
        """`value` with every secret value and credential-shaped text in it REDACTED."""
        if value in self._whole:
            return REDACTED
        if not self.may_hold(value.encode("utf-8", "surrogatepass")):
            return value
        for secret in self._ordered:
            value = value.replace(secret, REDACTED)
        if self._configured_only:
            return value
        value = _UPPER_KEYED.sub(_blank, _KEYED.sub(_blank, value))
        value = _URL_PASSWORD.sub(_blank, _SHAPED.sub(REDACTED, value))
        return _BEARER.sub(_blank, value)

    def scrub(self, value: Any) -> Any:
        """A copy of the plain data tree `value` (dicts, lists, tuples, strings …) with every secret REDACTED."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                self._inside(k) if isinstance(k, str) else k: REDACTED if self._keyed(k) else self.scrub(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.scrub(item) for item in value]
        if isinstance(value, tuple):
            return tuple(self.scrub(item) for item in value)
        return value

    def _inside(self, key: str) -> str:
        return key if key in self._whole else self.text(key)

    def _keyed(self, key: object) -> bool:
        return not self._configured_only and secret_key(key)

    def data(self, value: T) -> T:
        """Plain data (what progress and spans get) redacted; returned as it is when it holds nothing to redact."""
        try:
            encoded = msgspec.json.encode(value, enc_hook=str)
        except (TypeError, UnicodeEncodeError):
            return self.scrub(value)  # type: ignore[no-any-return]
        return self.scrub(value) if self.may_hold(encoded) else value

    def struct(self, value: T, kind: type[T]) -> T:
        """A msgspec value (a RunResult, a RunState, a Plan) redacted through its JSON form: the same object when
        it holds nothing to redact, else a redacted copy of type `kind`."""
        if self._configured_only and not self._secrets:  # the caller's copy, with no configured value to blank
            return value
        encoded = msgspec.json.encode(value)
        if not self.may_hold(encoded):
            return value
        return msgspec.json.decode(self._scrubbed(encoded), type=kind)

    def json(self, encoded: bytes) -> bytes:
        """A JSON document redacted: the same bytes when it holds nothing to redact."""
        return self._scrubbed(encoded) if self.may_hold(encoded) else encoded

    def _scrubbed(self, encoded: bytes) -> bytes:
        return msgspec.json.encode(self.scrub(msgspec.json.decode(encoded)))


class _Needles:
    """Finds any of a set of folded needles, each text read once per kind of needle by Rust's aho-corasick crate
    (ahocorasick_rs): the needles themselves, leftmost first (any match is a find); then "token" apart, leftmost
    longest beside "tokens" (a "tokens" must neither count nor hide a needle starting inside it). "sk-" is looked for
    in the raw bytes before the fold (`_SK_IN`)."""

    def __init__(self, needles: frozenset[bytes]) -> None:
        leftmost = ahocorasick_rs.MatchKind.LeftmostFirst
        self._any = ahocorasick_rs.BytesAhoCorasick(sorted(needles), matchkind=leftmost).find_matches_as_indexes

    @staticmethod
    @functools.lru_cache(maxsize=16)
    def of(needles: frozenset[bytes]) -> _Needles:
        """The matcher for a set of needles (built once: each run makes its Redactor from the same secrets)."""
        return _Needles(needles)

    def found(self, blob: bytes) -> bool:
        return bool(self._any(blob)) or any(match[0] == 0 for match in _TOKENS(blob))


_TOKENS = ahocorasick_rs.BytesAhoCorasick(
    [_TOKEN, _TOKEN + _PLURAL], matchkind=ahocorasick_rs.MatchKind.LeftmostLongest
).find_matches_as_indexes
_SK_IN = ahocorasick_rs.BytesAhoCorasick(
    [_SK], matchkind=ahocorasick_rs.MatchKind.LeftmostFirst
).find_matches_as_indexes


def _escaped_forms(secret: str) -> set[str]:
    try:
        once = msgspec.json.encode(secret).decode()[1:-1]
    except UnicodeEncodeError:  # a lone surrogate (an environment value that is not UTF-8): only the value itself
        return {secret}
    twice = msgspec.json.encode(once).decode()[1:-1]
    return {secret, once, twice}


NO_SECRETS = Redactor()  # no configured values: secret-named keys and credential-shaped text are still blanked
