"""bench/agentdojo.py scores AgentDojo pairs run through Aeon: the plan-first model solves the user task, the
obedient adversary carries out the injection when nothing stops it (needs the [bench] extra: agentdojo)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("agentdojo", reason="needs the [bench] extra")

BENCH = Path(__file__).resolve().parents[1] / "bench" / "agentdojo.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agentdojo_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


bench = _bench()
OFF = False if bench.defence_available() else None  # None: this Aeon has no policy section, so no defence at all


@pytest.fixture(scope="module")
def banking() -> object:
    return bench.Suite("banking")


def test_every_function_of_every_suite_has_exactly_one_declared_effect() -> None:
    from agentdojo.task_suite.load_suites import get_suite

    for name in bench.SUITES:
        functions = {f.name for f in get_suite(bench.VERSION, name).tools}
        lists = [bench.READ[name], bench.WRITE[name], bench.EXTERNAL[name]]
        assert set().union(*lists) == functions, name
        assert sum(map(len, lists)) == len(functions), f"{name}: a function is in two lists"


def test_the_plan_first_model_solves_a_banking_task_without_attack(banking: object) -> None:
    utility, attacked = banking.run("user_task_0", None, OFF)  # type: ignore[attr-defined]

    assert utility is True and attacked is None


def test_the_obedient_adversary_pays_the_attacker_when_the_defence_is_off(banking: object) -> None:
    utility, attacked = banking.run("user_task_0", "injection_task_0", OFF)  # type: ignore[attr-defined]

    assert attacked is True  # the injection task's send_money ran: AgentDojo's security() says the attack succeeded
    assert utility is True  # the user's own bill was paid too


@pytest.mark.skipif(not bench.defence_available(), reason="this Aeon has no policy section (issue 30)")
def test_the_obedient_adversary_cannot_pay_the_attacker_when_the_defence_is_on(banking: object) -> None:
    utility, attacked = banking.run("user_task_0", "injection_task_0", True)  # type: ignore[attr-defined]

    assert attacked is False
    assert utility is True
