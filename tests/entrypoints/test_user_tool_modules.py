"""`tools.modules` as users write it: names next to the config file or in the working directory, or .py paths."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from aeon.entrypoints.config.layers import load_settings
from aeon.entrypoints.container import build_container

from cli_harness import assert_exit, invoke, one_line, readme_files, run_user_pytest

pytestmark = pytest.mark.usefixtures("isolated_env", "forget_imports")

WEATHER = '''
from aeon.adapters.tools import tool


@tool(example={"city": "Paris"})
def weather(city: str) -> str:
    """Today's weather for a city."""
    return f"sunny in {city}"
'''


def tool_names(stdout: str) -> set[str]:
    return {spec["name"] for spec in json.loads(stdout)}


def test_the_readme_tools_example_works_as_written_from_its_folder(tmp_path: Path) -> None:
    files = readme_files("Your own tools")
    assert {"mytools.py", "my.yaml"} <= set(files)
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = invoke("tools", "--config", "my.yaml", "--json")  # isolated_env runs in tmp_path

    assert_exit(result, 0)
    assert "weather" in tool_names(result.stdout)


def test_a_module_next_to_the_config_file_is_found_from_another_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "weather_tools.py").write_text(WEATHER, encoding="utf-8")
    (project / "aeon.yaml").write_text('tools:\n  modules: ["weather_tools"]\n', encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = invoke("tools", "--config", project / "aeon.yaml", "--json")

    assert_exit(result, 0)
    assert "weather" in tool_names(result.stdout)


def test_a_package_in_the_working_directory_is_found_by_its_dotted_name(tmp_path: Path) -> None:
    (tmp_path / "acme_tools").mkdir()
    (tmp_path / "acme_tools" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "acme_tools" / "weather.py").write_text(WEATHER, encoding="utf-8")
    config_dir = tmp_path / "conf"
    config_dir.mkdir()
    (config_dir / "aeon.yaml").write_text('tools:\n  modules: ["acme_tools.weather"]\n', encoding="utf-8")
    result = invoke("tools", "--config", config_dir / "aeon.yaml", "--json")

    assert_exit(result, 0)
    assert "weather" in tool_names(result.stdout)


def test_a_py_file_path_is_relative_to_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "conf" / "tools").mkdir(parents=True)
    (tmp_path / "conf" / "tools" / "forecast.py").write_text(WEATHER, encoding="utf-8")
    (tmp_path / "conf" / "aeon.yaml").write_text('tools:\n  modules: ["tools/forecast.py"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path / "conf" / "tools")  # not where the path is relative to
    result = invoke("tools", "--config", tmp_path / "conf" / "aeon.yaml", "--json")

    assert_exit(result, 0)
    assert "weather" in tool_names(result.stdout)


def test_a_tools_module_that_is_nowhere_names_the_folders_searched(tmp_path: Path) -> None:
    (tmp_path / "aeon.yaml").write_text('tools:\n  modules: ["gone.py"]\n', encoding="utf-8")
    result = invoke("tools", "--config", tmp_path / "aeon.yaml")

    assert_exit(result, 2)
    line = one_line(result.stderr)
    assert "gone.py" in line and str(tmp_path) in line


def test_the_readme_toolset_example_registers_its_methods_and_they_share_state(tmp_path: Path) -> None:
    files = readme_files("Your own tools")
    assert "notebook.py" in files
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    listed = invoke("tools", "--config", "my.yaml", "--json")
    assert_exit(listed, 0)
    assert {"weather", "write_note", "read_note"} <= tool_names(listed.stdout)

    registry = build_container(load_settings(tmp_path / "my.yaml")).tools()
    assert asyncio.run(registry.invoke("write_note", {"title": "plan", "text": "add 5 and 10"})).ok
    assert asyncio.run(registry.invoke("read_note", {"title": "plan"})).output == "add 5 and 10"


def test_a_module_with_a_toolset_class_but_no_instance_says_to_create_one(tmp_path: Path) -> None:
    (tmp_path / "lonely.py").write_text(
        "from aeon.adapters.tools import Toolset\n\n\nclass Files(Toolset):\n    def size(self) -> int:\n"
        '        """Bytes used."""\n        return 0\n',
        encoding="utf-8",
    )
    (tmp_path / "aeon.yaml").write_text('tools:\n  modules: ["lonely"]\n', encoding="utf-8")
    result = invoke("tools", "--config", "aeon.yaml")

    assert_exit(result, 2)
    assert "module-level instance" in one_line(result.stderr)


def test_the_readme_testing_example_passes_as_a_users_own_test(tmp_path: Path) -> None:
    """The README's test of the `weather` tool, run by pytest in a fresh folder the way a user would run it."""
    files = {**readme_files("Your own tools"), **readme_files("Testing your tools and configs")}
    assert {"mytools.py", "test_mytools.py"} <= set(files)
    for name in ("mytools.py", "test_mytools.py"):
        (tmp_path / name).write_text(files[name], encoding="utf-8")
    proc = run_user_pytest(tmp_path, "test_mytools.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
