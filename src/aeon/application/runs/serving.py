"""The `serve:` section of the settings schema (`aeon serve`): which run options a client may set, the bounds on
what a client sends and reads, the optional webhook called when a run ends, and the hashed tokens the config holds."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator

from aeon.application.settings_section import Section

# What a client of `aeon serve` may ever be allowed to set (serve.options picks among them): the run's own bounds.
# Never the tools, the model, its address or its key: those are the server's config alone.
CLIENT_OPTIONS = ("ttl", "max_llm_calls", "max_cost", "max_seconds", "max_tokens", "evaluate")


class WebhookSettings(Section):
    """`serve.webhook`: POSTed the run's end (JSON, at most `max_body` bytes) signed with HMAC-SHA256 of `secret`
    in the X-Aeon-Signature header; retried `attempts` times in all, `timeout` seconds each."""

    url: str
    secret: SecretStr
    attempts: int = Field(5, ge=1, le=20)
    timeout: float = Field(10.0, gt=0)
    max_body: int = Field(64_000, ge=1_000)


class TokenSettings(Section):
    """A bearer token the config holds: its name and the SHA-256 of its value (hex)."""

    name: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class ServeSettings(Section):
    """`serve:`: `options` a client may set on a run (among CLIENT_OPTIONS); `max_body` bytes of a request body;
    `max_events` records and `max_stream_seconds` of one event stream; `tokens` besides those `aeon serve token add`
    keeps in the system database; `webhook` called once when a run a client started ends."""

    options: tuple[str, ...] = ("ttl", "max_llm_calls", "max_cost")
    max_body: int = Field(64_000, ge=1_000)
    max_events: int = Field(10_000, ge=1)
    max_stream_seconds: float = Field(3_600.0, gt=0)
    tokens: tuple[TokenSettings, ...] = ()
    webhook: WebhookSettings | None = None

    @field_validator("options")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [o for o in value if o not in CLIENT_OPTIONS]
        if unknown:
            raise ValueError(f"a client may set only {', '.join(CLIENT_OPTIONS)}; not {', '.join(unknown)}")
        return value
