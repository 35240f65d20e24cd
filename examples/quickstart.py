# examples/quickstart.py
"""One call: a request, your tool and a model in; the typed result (the fields of `aeon run --json`) out."""

import aeon


def weather(city: str) -> str:
    """Today's weather for a city."""
    return f"sunny in {city}"


# A scripted model, to run offline; for a real one: model="openai:gpt-4o-mini" (with OPENAI_API_KEY set).
result = aeon.run("what is the weather in Paris?", tools=[weather], model="scripted:examples/weather.yaml")

print(result.status)  # completed
print(result.answer)  # sunny in Paris
print(f"{result.budget.llm_calls} LLM calls, {result.passes} pass")  # 2 LLM calls, 1 pass
