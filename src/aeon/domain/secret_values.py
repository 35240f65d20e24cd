"""Which values are secrets by where they stand: under a secret-named environment variable, or as the password of
a URL (a tool may read `GITHUB_TOKEN` itself and hand it back in its output; a database URL may carry one)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote, urlsplit

# OPENAI_API_KEY, AEON_LLM_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, SIGNING_KEY …
SECRET_ENV = re.compile(r"API_?KEY|TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|PRIVATE|(^|_)KEY$", re.IGNORECASE)
# Shorter environment values under such names are flags or counts ("1", "true", "none"), not secrets: blanking them
# everywhere would garble every text holding the word. A configured key is blanked whatever its length.
MIN_ENV_SECRET = 8


def secret_env_name(name: str) -> bool:
    """True for an environment variable (or header) name that says its value is a credential: its value is then
    blanked wherever it appears, in every sink (log, output, prompts, traces). Narrower on purpose than
    `entrypoints/config/env_markers.secret_named`, which only decides that a config error does not quote a variable
    used in the config: blanking the value of any name holding KEY or AUTH (KEYBOARD_LAYOUT, OAUTH_REDIRECT_URL)
    would garble ordinary text, while not quoting one in an error costs nothing."""
    return SECRET_ENV.search(name) is not None


def long_enough(value: str) -> bool:
    return len(value.strip()) >= MIN_ENV_SECRET


def env_secrets(environ: Mapping[str, str]) -> set[str]:
    """The values of the secret-named variables in `environ` long enough to be secrets."""
    return {v for k, v in environ.items() if secret_env_name(k) and long_enough(v)}


def url_passwords(urls: Iterable[str | None]) -> set[str]:
    """The passwords the `urls` carry (unquoted); a URL that does not parse carries none."""
    found = set()
    for url in urls:
        try:
            password = urlsplit(url).password if url else None
        except ValueError:
            continue
        if password:
            found.add(unquote(password))
    return found
