"""The secret values a run's Redactor blanks: the configured keys, passwords in configured URLs, and the values of
secret-named environment variables (domain/secret_values.py says which)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from aeon.application.redaction import Redactor, secret_key
from aeon.domain.secret_values import env_secrets, long_enough, secret_env_name, url_passwords
from aeon.entrypoints.config.schema import Settings


def run_secrets(settings: Settings | None, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every secret value a run of `settings` could let out (None: no config, the environment alone)."""
    found = set(settings.secrets()) if settings is not None else set()
    if settings is not None:
        remote = (*(s.url for s in settings.tools.mcp), *(a.url for a in settings.tools.a2a))
        found |= url_passwords((settings.llm.base_url, settings.durable.database_url, settings.otel.endpoint, *remote))
        found |= {v for v in _mcp_credentials(settings) if long_enough(v)}
    return sorted(found | env_secrets(os.environ if environ is None else environ))


def _mcp_credentials(settings: Settings) -> set[str]:
    """What MCP servers and A2A agents are handed as credentials: the values environment markers put into their env
    and headers, and the values under secret-named env variables and headers (`GITHUB_TOKEN`, `Authorization` …)."""
    found = set(settings.env_secrets)
    given = [(*s.env.items(), *s.headers.items()) for s in settings.tools.mcp]
    given += [tuple(a.headers.items()) for a in settings.tools.a2a]
    for name, value in (pair for pairs in given for pair in pairs):
        if value is not None and (secret_env_name(name) or secret_key(name) or "auth" in name.lower()):
            found.add(value.get_secret_value())
    return found


def redactor_for(settings: Settings | None, environ: Mapping[str, str] | None = None) -> Redactor:
    return Redactor(run_secrets(settings, environ))
