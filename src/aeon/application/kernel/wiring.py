"""The per-run services, built in one place from the ports and the run, and handed to each stage as the few it
uses: phase A the profiler and planner, B the tool resolver, C the executor, evaluator, refiner and refinement
gate; every stage the phase runner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aeon.application.judges.evaluator import Evaluator
from aeon.application.judges.refinement_gate import RefinementGate
from aeon.application.judges.refiner import Refiner
from aeon.application.kernel.approvals import Approvals
from aeon.application.kernel.executor import Executor
from aeon.application.kernel.phase_runner import PhaseRunner
from aeon.application.kernel.run import Run, RunSettings
from aeon.application.llm.gateway import LLMGateway
from aeon.application.llm.planner import Planner
from aeon.application.llm.profiler import Profiler
from aeon.application.llm.prompt_budget import PromptBudget, context_window
from aeon.application.llm.prompts.profiles import prompt_set
from aeon.application.llm.supervisor import Supervisor
from aeon.application.plans.validation import ToolResolver
from aeon.application.policy import Described
from aeon.application.ports import ApproverPort, LLMPort, MemoryPort, ToolPort
from aeon.domain.llm import DEFAULT_MAX_TOKENS
from aeon.domain.tools import ToolSpec


@dataclass(frozen=True, slots=True)
class Planning:
    """Phase A: profile the task, allocate its depth, make the plan."""

    runner: PhaseRunner
    profiler: Profiler
    planner: Planner
    settings: RunSettings


@dataclass(frozen=True, slots=True)
class Checking:
    """Phase B: check the plan's fragments and flag its tool problems."""

    runner: PhaseRunner
    resolver: ToolResolver


@dataclass(frozen=True, slots=True)
class Working:
    """Phase C: execute (C1), evaluate (C2), refine (C3)."""

    runner: PhaseRunner
    executor: Executor
    evaluator: Evaluator
    refiner: Refiner
    gate: RefinementGate
    settings: RunSettings


@dataclass(frozen=True, slots=True)
class RunServices:
    specs: list[ToolSpec]
    runner: PhaseRunner
    planning: Planning
    checking: Checking
    working: Working


def _prompt_budget(run: Run, llm: LLMPort, settings: RunSettings, prefix: str) -> PromptBudget:
    """What a prompt may hold of earlier steps: the model's context window less the answer's reserve and the prefix."""
    return PromptBudget(
        run,
        window=context_window(settings.context_window, llm.describe()),
        reserve=DEFAULT_MAX_TOKENS if settings.llm_max_tokens is None else settings.llm_max_tokens,
        prefix=prefix,
    )


def wire(
    run: Run,
    *,
    llm: LLMPort,
    tools: ToolPort,
    memory: MemoryPort,
    settings: RunSettings,
    new_id: Callable[[], str],
    approver: ApproverPort | None = None,
) -> RunServices:
    specs = tools.list()
    prompts = prompt_set(llm.describe().profile)  # the layout the model needs (README "Choosing a model")
    prefix = prompts.shared_prefix(specs, settings.policy, evaluate=settings.evaluate)
    gateway = LLMGateway(llm, run, max_tokens=settings.llm_max_tokens, preamble=prefix, prices=settings.prices)
    described = Described(specs, settings.policy)
    supervisor = Supervisor(gateway, run.record, run.state.counters, specs, described, prompts)
    budget = _prompt_budget(run, llm, settings, prefix)
    resolver = ToolResolver(tools.get)
    runner = PhaseRunner(run)
    approvals = Approvals(approver, run, resolver, timeout=settings.approval_timeout, policy=settings.policy)
    executor = Executor(
        tools=tools,
        resolver=resolver,
        memory=memory,
        gateway=gateway,
        supervisor=supervisor,
        run=run,
        approvals=approvals,
        output_check=settings.output_check,
        budget=budget,
    )
    return RunServices(
        specs=specs,
        runner=runner,
        planning=Planning(
            runner=runner,
            profiler=Profiler(supervisor),
            planner=Planner(supervisor, specs, max_steps=settings.max_plan_steps),
            settings=settings,
        ),
        checking=Checking(runner=runner, resolver=resolver),
        working=Working(
            runner=runner,
            executor=executor,
            evaluator=Evaluator(supervisor, settings.criteria, specs, new_id=new_id, budget=budget),
            refiner=Refiner(supervisor, specs, budget),
            gate=RefinementGate({t.name: t for t in specs}, run.state.ledger, approvals=run.state.approvals),
            settings=settings,
        ),
    )
