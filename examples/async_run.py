# examples/async_run.py
"""aeon.arun in async code; in Jupyter, `await aeon.arun(...)` works in a cell as it is (aeon.run would refuse)."""

import asyncio

import aeon


class Weather(aeon.Toolset):
    """Weather lookups that remember what they were asked (every public method is a tool)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def weather(self, city: str) -> str:
        """Today's weather for a city."""
        self.asked.append(city)
        return f"sunny in {city}"


async def main() -> None:
    tools = Weather()
    result = await aeon.arun(
        "what is the weather in Paris?",
        tools=[tools],
        model="scripted:examples/weather.yaml",
        max_llm_calls=5,  # caps as on the command line: ttl, max_llm_calls, max_tokens, max_cost, max_seconds
        log_file=False,  # no JSONL log this time (default: .aeon/runs.jsonl)
    )
    print(result.status, result.answer, tools.asked)  # completed sunny in Paris ['Paris']


asyncio.run(main())
