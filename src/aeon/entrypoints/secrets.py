"""The secret values a run's Redactor blanks: the configured keys, passwords in configured URLs, and the values of
secret-named environment variables (a tool may read `GITHUB_TOKEN` itself and hand it back in its output)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from aeon.application.redaction import Redactor, secret_key
from aeon.entrypoints.config.schema import Settings

# OPENAI_API_KEY, AEON_LLM_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, SIGNING_KEY …
_SECRET_ENV = re.compile(r"API_?KEY|TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|PRIVATE|(^|_)KEY$", re.IGNORECASE)
# Shorter environment values under such names are flags or counts ("1", "true", "none"), not secrets: blanking them
# everywhere would garble every text holding the word. A configured key is blanked whatever its length.
MIN_ENV_SECRET = 8


def run_secrets(settings: Settings | None, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every secret value a run of `settings` could let out (None: no config, the environment alone)."""
    found = set(settings.secrets()) if settings is not None else set()
    if settings is not None:
        remote = (*(s.url for s in settings.tools.mcp), *(a.url for a in settings.tools.a2a))
        urls = (settings.llm.base_url, settings.durable.database_url, settings.otel.endpoint, *remote)
        found |= {p for url in urls if url and (p := _password(url))}
        found |= {v for v in _mcp_credentials(settings) if len(v.strip()) >= MIN_ENV_SECRET}
    env = os.environ if environ is None else environ
    found |= {v for k, v in env.items() if _SECRET_ENV.search(k) and len(v.strip()) >= MIN_ENV_SECRET}
    return sorted(found)


def _mcp_credentials(settings: Settings) -> set[str]:
    """What MCP servers and A2A agents are handed as credentials: the values environment markers put into their env
    and headers, and the values under secret-named env variables and headers (`GITHUB_TOKEN`, `Authorization` …)."""
    found = set(settings.env_secrets)
    given = [(*s.env.items(), *s.headers.items()) for s in settings.tools.mcp]
    given += [tuple(a.headers.items()) for a in settings.tools.a2a]
    for name, value in (pair for pairs in given for pair in pairs):
        if value is not None and (_SECRET_ENV.search(name) or secret_key(name) or "auth" in name.lower()):
            found.add(value.get_secret_value())
    return found


def redactor_for(settings: Settings | None, environ: Mapping[str, str] | None = None) -> Redactor:
    return Redactor(run_secrets(settings, environ))


def _password(url: str) -> str | None:
    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return unquote(password) if password else None
