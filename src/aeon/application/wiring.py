"""The per-run services, built in one place from the ports and the run: gateway, supervisor, planner, executor,
profiler, evaluator, refiner, refinement gate and phase runner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aeon.application.evaluator import Evaluator
from aeon.application.executor import Executor
from aeon.application.gateway import LLMGateway
from aeon.application.phase_runner import PhaseRunner
from aeon.application.planner import Planner
from aeon.application.ports import LLMPort, MemoryPort, ToolPort
from aeon.application.profiler import Profiler
from aeon.application.prompts import templates
from aeon.application.refinement_gate import RefinementGate
from aeon.application.refiner import Refiner
from aeon.application.run import Run, RunSettings
from aeon.application.supervisor import Supervisor, describe_tools
from aeon.application.validation import ToolResolver
from aeon.domain.tools import ToolSpec


@dataclass(frozen=True, slots=True)
class RunServices:
    settings: RunSettings
    specs: list[ToolSpec]
    memory: MemoryPort
    runner: PhaseRunner
    planner: Planner
    profiler: Profiler
    executor: Executor
    evaluator: Evaluator
    refiner: Refiner
    gate: RefinementGate
    resolver: ToolResolver


def wire(
    run: Run,
    *,
    llm: LLMPort,
    tools: ToolPort,
    memory: MemoryPort,
    settings: RunSettings,
    new_id: Callable[[], str],
) -> RunServices:
    specs = tools.list()
    preamble = templates.PREAMBLE.render({"tools": describe_tools(specs)})
    gateway = LLMGateway(llm, run, max_tokens=settings.llm_max_tokens, preamble=preamble, prices=settings.prices)
    supervisor = Supervisor(gateway, run, specs)
    resolver = ToolResolver(tools.get)
    return RunServices(
        settings=settings,
        specs=specs,
        memory=memory,
        runner=PhaseRunner(run),
        planner=Planner(supervisor, specs, max_steps=settings.max_plan_steps),
        profiler=Profiler(supervisor),
        executor=Executor(
            tools=tools, resolver=resolver, memory=memory, gateway=gateway, supervisor=supervisor, run=run
        ),
        evaluator=Evaluator(supervisor, settings.criteria, specs, new_id=new_id),
        refiner=Refiner(supervisor, specs),
        gate=RefinementGate({t.name: t for t in specs}, run.state.ledger),
        resolver=resolver,
    )
