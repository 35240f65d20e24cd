"""Aeon: an LLM orchestration kernel with declarative plans, supervised repair and bounded loops.

    import aeon

    @aeon.tool
    def weather(city: str) -> str:
        \"\"\"Today's weather for a city.\"\"\"
        return f"sunny in {city}"

    result = aeon.run("what is the weather in Paris?", tools=[weather], model="openai:gpt-4o-mini")
    print(result.status, result.answer)

The public names: `run`, `arun` (async), `stream` (the run's events as they happen, `aeon.events`), `tool` and
`Toolset` (your tools), `RunResult` and `RunStatus` (what a run returns), `ApprovalRequest`, `ApprovalDecision`,
`Verdict` and `answer` (deciding on tool calls that need a person's approval), and the errors a caller catches before a
run starts — `AeonError` (the root of them all), `ConfigurationError`, `InputError`, `ToolRegistrationError`,
`UsageError`. Each is imported on first use, so `import aeon` stays cheap; everything else is internal.
"""

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy and IDEs read it by its name)
if TYPE_CHECKING:
    from aeon import events as events
    from aeon.adapters.tools.decorator import tool as tool
    from aeon.adapters.tools.toolset import Toolset as Toolset
    from aeon.application.errors import ConfigurationError as ConfigurationError
    from aeon.application.errors import InputError as InputError
    from aeon.application.errors import ToolRegistrationError as ToolRegistrationError
    from aeon.application.errors import UsageError as UsageError
    from aeon.application.results import RunResult as RunResult
    from aeon.application.results import RunStatus as RunStatus
    from aeon.domain.approval import ApprovalDecision as ApprovalDecision
    from aeon.domain.approval import ApprovalRequest as ApprovalRequest
    from aeon.domain.approval import Verdict as Verdict
    from aeon.domain.errors import AeonError as AeonError
    from aeon.entrypoints.api import answer as answer
    from aeon.entrypoints.api import arun as arun
    from aeon.entrypoints.api import run as run
    from aeon.entrypoints.api import stream as stream

# Where each public name lives; a module here is the name itself (aeon.events).
_EXPORTS = {
    "run": "aeon.entrypoints.api",
    "arun": "aeon.entrypoints.api",
    "stream": "aeon.entrypoints.api",
    "tool": "aeon.adapters.tools.decorator",
    "Toolset": "aeon.adapters.tools.toolset",
    "RunResult": "aeon.application.results",
    "RunStatus": "aeon.application.results",
    "events": "aeon.events",
    "answer": "aeon.entrypoints.api",
    "ApprovalRequest": "aeon.domain.approval",
    "ApprovalDecision": "aeon.domain.approval",
    "Verdict": "aeon.domain.approval",
    "AeonError": "aeon.domain.errors",
    "ConfigurationError": "aeon.application.errors",
    "InputError": "aeon.application.errors",
    "ToolRegistrationError": "aeon.application.errors",
    "UsageError": "aeon.application.errors",
}

__all__ = [
    "AeonError",
    "ApprovalDecision",
    "ApprovalRequest",
    "ConfigurationError",
    "InputError",
    "RunResult",
    "RunStatus",
    "ToolRegistrationError",
    "Toolset",
    "UsageError",
    "Verdict",
    "answer",
    "arun",
    "events",
    "run",
    "stream",
    "tool",
]


def __getattr__(name: str) -> object:
    """A public name, imported the first time it is asked for (the container, DBOS and httpx only with `run`)."""
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module 'aeon' has no attribute {name!r}")
    module = __import__(where, fromlist=["_"])  # the submodule itself (importlib would be one more import)
    value = module if where == f"aeon.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
