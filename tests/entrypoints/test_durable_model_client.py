"""A process that executes many durable runs (a batch, a worker) keeps one model client: the local server stays
warm across the runs; the scripted model, which answers each run from the start of its script, is per run."""

from __future__ import annotations

from pathlib import Path

import yaml

from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.config.schema import Settings
from aeon.entrypoints.container import build_container
from aeon.entrypoints.durable.factory import ContainerFactory

from cli_harness import SUM_STEP, plan_json


def _settings(tmp_path: Path, llm: dict[str, str]) -> Settings:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = tmp_path / "aeon.yaml"
    config.write_text(yaml.safe_dump({"llm": llm}))
    return load_settings(config)


def test_runs_of_one_process_share_the_model_client_of_one_configuration(tmp_path: Path) -> None:
    settings = _settings(tmp_path, {"adapter": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"})
    composer = ContainerFactory()  # the process's: what its runs share
    first = composer.shared_model(settings, build_container(settings))
    second = composer.shared_model(settings, build_container(settings))
    assert first is not None and first is second
    other = _settings(tmp_path / "o", {"adapter": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "n"})
    third = composer.shared_model(other, build_container(other))
    assert third is not first  # another model is another client


def test_each_scripted_run_gets_its_own_model_so_its_script_starts_at_the_first_answer(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"responses": [plan_json(SUM_STEP)]}))
    settings = _settings(tmp_path, {"adapter": "scripted", "script": str(script)})
    composer = ContainerFactory()
    # none shared: each run's container opens its own scripted model as a resource, and closes it after the run
    assert composer.shared_model(settings, build_container(settings)) is None
