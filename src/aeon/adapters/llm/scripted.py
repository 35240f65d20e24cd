"""ScriptedLLM: a deterministic model for tests, demos and users' own tests, replaying a YAML script in order."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from aeon.adapters.documents import MAX_SCRIPT_BYTES, read_document
from aeon.adapters.llm.expected import calls, expected_answer
from aeon.application.errors import InputError, LLMBadResponse, LLMError, LLMRejected, LLMUnavailable, ScriptExhausted
from aeon.application.ports import LLMPort
from aeon.domain.llm import Completion, Message, ModelInfo, PromptProfile, Usage

if TYPE_CHECKING:  # the settings section is only read
    from aeon.adapters.llm.settings import LLMSettings


def _unavailable(src: str) -> LLMError:
    return LLMUnavailable(
        f"provider unavailable after 3 attempts (HTTP 503, scripted by {src})", status=503, attempts=3
    )


def _rejected(src: str) -> LLMError:
    return LLMRejected(f"rejected: HTTP 400 scripted rejection ({src})", status=400)


def _invalid(src: str) -> LLMError:
    return LLMBadResponse(f"undecodable response body (scripted by {src})")


_ERRORS: dict[str, Callable[[str], LLMError]] = {
    "unavailable": _unavailable,
    "rejected": _rejected,
    "invalid": _invalid,
}


class ScriptedRequest(msgspec.Struct, frozen=True, kw_only=True):
    messages: list[Message]
    schema: dict[str, Any] | None
    schema_name: str


class ScriptedLLM:
    """Answers each call with the next scripted response: a string returned verbatim, or `{error: kind}`.

    Running out of responses raises ScriptExhausted naming the script and the answer the call asked for (its kind
    and a JSON example). Every request is kept in `requests`.
    """

    def __init__(
        self,
        responses: Sequence[str | Mapping[str, Any]],
        *,
        source: str = "<inline script>",
        request: str = "",
        profile: PromptProfile | None = None,
    ) -> None:
        for i, item in enumerate(responses):
            if isinstance(item, Mapping) and item.get("error") not in _ERRORS:
                raise InputError(
                    f"{source}: response {i + 1} has unknown error kind {item.get('error')!r} "
                    f"(expected one of {', '.join(_ERRORS)})"
                )
            if not isinstance(item, str | Mapping):
                raise InputError(f"{source}: response {i + 1} must be a string or {{error: kind}}")
        self._responses = list(responses)
        self._source = source
        self._request = request  # the request this script was written for, if it says
        self._profile = profile  # llm.profile: the prompt layout its script was written for (unset: base)
        self.requests: list[ScriptedRequest] = []
        self._skipped = 0

    @classmethod
    def from_file(cls, path: str | Path, profile: PromptProfile | None = None) -> ScriptedLLM:
        p = Path(path)
        data = read_document(p, what="LLM script", max_bytes=MAX_SCRIPT_BYTES)
        if not isinstance(data, dict) or not isinstance(data.get("responses"), list):
            raise InputError(f"LLM script {p} must be a mapping with a 'responses:' list")
        return cls(data["responses"], source=str(p), request=str(data.get("request") or ""), profile=profile)

    def describe(self) -> ModelInfo:
        return ModelInfo(
            adapter="scripted",
            model="scripted",
            dialect="scripted",
            dialect_source=self._source,
            provider="scripted",
            scripted_request=self._request or None,
            profile=self._profile or "base",
            profile_source="llm.profile" if self._profile else "default",
        )

    @property
    def remaining(self) -> int:
        return len(self._responses) - self._skipped - len(self.requests)

    def skip(self, count: int = 1) -> None:
        """Count `count` answers as given: a durable run re-executed after a crash gets those calls' answers from
        its record, so this script goes on at the first call that was never answered."""
        self._skipped += count

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        n = self._skipped + len(self.requests)
        self.requests.append(
            ScriptedRequest(messages=list(messages), schema=dict(schema) if schema else None, schema_name=schema_name)
        )
        if n >= len(self._responses):
            wanted = expected_answer(n + 1, messages, schema_name, schema)
            raise ScriptExhausted(f"scripted LLM {self._source} ran out of responses after {calls(n)}: {wanted}")
        item = self._responses[n]
        if isinstance(item, Mapping):
            raise _ERRORS[str(item["error"])](self._source)
        prompt_chars = sum(len(m.content) for m in messages)
        usage = Usage(prompt_tokens=max(1, prompt_chars // 4), completion_tokens=max(1, len(item) // 4))
        return Completion(
            text=item, usage=usage, request_id=f"scripted-{n + 1}", finish_reason="stop", model="scripted"
        )

    async def aclose(self) -> None:
        return None


def from_settings(llm: LLMSettings, *, logger: object, status: object) -> LLMPort:
    """The adapter of provider record `scripted`, from the `llm:` section; as the port: mypy checks it."""
    assert llm.script is not None, "the settings schema requires llm.script for the scripted adapter"
    return ScriptedLLM.from_file(llm.script, llm.profile)
