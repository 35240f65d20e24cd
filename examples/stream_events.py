# examples/stream_events.py
"""The events of a run as they happen — phases, the plan, each step and LLM call — and the result last."""

import asyncio

import aeon
from aeon.events import LLMCallEnded, PhaseStarted, PlanMade, RunEnded, StepEnded


@aeon.tool
def weather(city: str) -> str:
    """Today's weather for a city."""
    return f"sunny in {city}"


async def main() -> None:
    events = aeon.stream("what is the weather in Paris?", tools=[weather], model="scripted:examples/weather.yaml")
    async for event in events:
        match event:
            case PhaseStarted(phase=phase, pass_number=number):
                print(f"pass {number} · phase {phase}")
            case PlanMade(plan=plan):
                print(f"  plan: {', '.join(step.description for step in plan.steps)}")
            case StepEnded(step_id=step, status=status, output=output):
                print(f"  {step} {status}: {output}")
            case LLMCallEnded(purpose=purpose, prompt_tokens=sent, completion_tokens=received, cost=cost):
                print(f"  LLM {purpose}: {sent} tokens in, {received} out, ${cost}")
            case RunEnded(result=result):
                print(f"{result.status}: {result.answer}")


asyncio.run(main())
