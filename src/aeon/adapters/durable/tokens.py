"""The bearer tokens of `aeon serve`, kept in the system database as their SHA-256 only (`aeon_serve_tokens`): made
(the token shown once), listed, revoked; a server reads them afresh at most every second, so a revoked token stops
working on every server sharing the database."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime

import sqlalchemy as sa

from aeon.adapters.durable.engine import sql_engine
from aeon.adapters.durable.tables import create_tables
from aeon.application.errors import InputError

_META = sa.MetaData()
TOKENS = sa.Table(
    "aeon_serve_tokens",
    _META,
    sa.Column("name", sa.String(255), primary_key=True),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
)


class Tokens:
    """The tokens on the system database at `url`."""

    def __init__(self, url: str) -> None:
        self._engine = sql_engine(url)
        create_tables(_META, self._engine)

    def add(self, name: str) -> str:
        """A new token named `name` (InputError: the name is taken); only its hash is kept."""
        if not name.strip():
            raise InputError("a token needs a name: aeon serve token add NAME")
        token = "aeon_" + secrets.token_urlsafe(32)
        row = {
            "name": name,
            "sha256": hashlib.sha256(token.encode()).hexdigest(),
            "created_at": datetime.now(UTC).isoformat(),
        }
        with self._engine.begin() as c:
            if c.execute(sa.select(TOKENS.c.name).where(TOKENS.c.name == name)).first() is not None:
                raise InputError(f"a token named {name!r} exists: revoke it first (aeon serve token revoke {name})")
            c.execute(TOKENS.insert().values(**row))
        return token

    def revoke(self, name: str) -> None:
        with self._engine.begin() as c:
            if c.execute(TOKENS.delete().where(TOKENS.c.name == name)).rowcount == 0:
                raise InputError(f"no token named {name!r} (aeon serve token list shows them)")

    def listed(self) -> list[tuple[str, str]]:
        """(name, when it was made), oldest first."""
        with self._engine.connect() as c:
            rows = c.execute(sa.select(TOKENS.c.name, TOKENS.c.created_at).order_by(TOKENS.c.created_at)).all()
        return [(r[0], r[1]) for r in rows]

    def hashes(self) -> list[str]:
        with self._engine.connect() as c:
            return [r[0] for r in c.execute(sa.select(TOKENS.c.sha256)).all()]

    def close(self) -> None:
        self._engine.dispose()


class Live:
    """The hashes a server accepts: `fixed` ones (the config's) and those `read()` returns now, read again once
    `every` seconds have passed (a revoked token stops working within that)."""

    def __init__(
        self, fixed: Iterable[str], read: Callable[[], list[str]], *, every: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self._fixed, self._read, self._every, self._clock = frozenset(fixed), read, every, clock
        self._seen: frozenset[str] = frozenset()
        self._at = float("-inf")
        self._lock = threading.Lock()

    def _now(self) -> frozenset[str]:
        with self._lock:
            if self._clock() - self._at >= self._every:
                self._seen, self._at = frozenset(self._read()), self._clock()
            return self._fixed | self._seen

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())

    def __contains__(self, digest: object) -> bool:
        return digest in self._now()
