"""The peers of bench/tokens.py over HTTP: LangGraph's plan-and-execute as its tutorial writes it (planner, a ReAct
executor agent, replanner; langchain-openai's ChatOpenAI) and a pydantic-ai agent, both with Aeon's calculator and
echo tools (the same names, arguments and descriptions), both pointed at an OpenAI-compatible `base_url`.
Needs the [bench] extra (langgraph, langchain-openai, pydantic-ai-slim[openai]).
"""

from __future__ import annotations

import asyncio
import importlib.util
import operator
import warnings
from typing import Annotated, Any

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from aeon.adapters.tools.builtin import echo as aeon_echo
from aeon.adapters.tools.calculator import calculator as aeon_calculator
from aeon.adapters.tools.calculator import evaluate

PEERS = {"langgraph": ("langgraph", "langchain_openai"), "pydantic-ai": ("pydantic_ai",)}
API_KEY = "sk-bench-not-a-key"


def missing(peer: str) -> list[str]:
    """The modules `peer` needs that are not installed."""
    return [m for m in PEERS[peer] if importlib.util.find_spec(m) is None]


def calculator(expression: str) -> float:
    return float(evaluate(expression))


def echo(text: str) -> str:
    return text


calculator.__doc__, echo.__doc__ = aeon_calculator.__doc__, aeon_echo.__doc__

# The tutorial's prompts (langgraph docs, tutorials/plan-and-execute), word for word.
_OBJECTIVE = """For the given objective, come up with a simple step by step plan. \
This plan should involve individual tasks, that if executed correctly will yield the correct answer. Do not add any \
superfluous steps. \
The result of the final step should be the final answer. Make sure that each step has all the information needed - \
do not skip steps."""
_REPLAN = (
    _OBJECTIVE
    + """

Your objective was this:
{input}

Your original plan was this:
{plan}

You have currently done the follow steps:
{past_steps}

Update your plan accordingly. If no more steps are needed and you can return to the user, then respond with that. \
Otherwise, fill out the plan. Only add steps to the plan that still NEED to be done. Do not return previously done \
steps as part of the plan."""
)


class Plan(BaseModel):
    """Plan to follow in future"""

    steps: list[str] = Field(description="different steps to follow, should be in sorted order")


class Response(BaseModel):
    """Response to user."""

    response: str


class Act(BaseModel):
    """Action to perform."""

    action: Response | Plan = Field(
        description="Action to perform. If you want to respond to user, use Response. "
        "If you need to further use tools to get the answer, use Plan."
    )


class PlanExecute(TypedDict, total=False):
    input: str
    plan: list[str]
    past_steps: Annotated[list[tuple[str, str]], operator.add]
    response: str


def langgraph_app(base_url: str, model: str) -> Any:
    """The tutorial's graph: planner → agent → replan → (agent | END)."""
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, StateGraph
    from langgraph.prebuilt import create_react_agent

    def llm() -> Any:
        return ChatOpenAI(model=model, temperature=0, base_url=base_url, api_key=API_KEY, max_retries=0)

    with warnings.catch_warnings():  # the tutorial's create_react_agent, moved to langchain.agents in LangGraph 1.0
        warnings.simplefilter("ignore")
        agent_executor = create_react_agent(
            llm(), [tool(calculator), tool(echo)], prompt="You are a helpful assistant."
        )
    planner = ChatPromptTemplate.from_messages([("system", _OBJECTIVE), ("placeholder", "{messages}")])
    planner_chain = planner | llm().with_structured_output(Plan)
    replanner_chain = ChatPromptTemplate.from_template(_REPLAN) | llm().with_structured_output(Act)

    async def execute_step(state: PlanExecute) -> dict[str, Any]:
        plan = state["plan"]
        plan_str = "\n".join(f"{i + 1}. {step}" for i, step in enumerate(plan))
        task = plan[0]
        task_formatted = f"""For the following plan:
{plan_str}\n\nYou are tasked with executing step {1}, {task}."""
        agent_response = await agent_executor.ainvoke({"messages": [("user", task_formatted)]})
        return {"past_steps": [(task, agent_response["messages"][-1].content)]}

    async def plan_step(state: PlanExecute) -> dict[str, Any]:
        plan = await planner_chain.ainvoke({"messages": [("user", state["input"])]})
        return {"plan": plan.steps}

    async def replan_step(state: PlanExecute) -> dict[str, Any]:
        output = await replanner_chain.ainvoke(state)
        if isinstance(output.action, Response):
            return {"response": output.action.response}
        return {"plan": output.action.steps}

    def should_end(state: PlanExecute) -> str:
        return END if state.get("response") else "agent"

    workflow = StateGraph(PlanExecute)
    workflow.add_node("planner", plan_step)
    workflow.add_node("agent", execute_step)
    workflow.add_node("replan", replan_step)
    workflow.add_edge(START, "planner")
    workflow.add_edge("planner", "agent")
    workflow.add_edge("agent", "replan")
    workflow.add_conditional_edges("replan", should_end, ["agent", END])
    return workflow.compile()


def run_langgraph(request: str, base_url: str, model: str) -> str:
    """The final response of the tutorial's graph for `request`."""
    final = asyncio.run(langgraph_app(base_url, model).ainvoke({"input": request}, {"recursion_limit": 50}))
    return str(final["response"])


def run_pydantic_ai(request: str, base_url: str, model: str) -> str:
    """The answer of a pydantic-ai agent with the two tools (no system prompt: the request and the tools only)."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    chat = OpenAIChatModel(model, provider=OpenAIProvider(base_url=base_url, api_key=API_KEY))
    agent = Agent(chat, tools=[calculator, echo])
    return str(agent.run_sync(request).output)
