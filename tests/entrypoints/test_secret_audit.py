"""A user's audit of every output: distinct secrets planted in the environment, the config, the request, the plan's
arguments, a tool's output, a tool's error and the model's answers of one run, and not one fragment of any of them in
any file, stream, database row or prompt that Aeon writes — with every output on.

The sinks are a table: each `aeon` command that shows or stores run data has its entry, and a command the table
does not know fails the test (the CLI's commands are enumerated), so a new output cannot be added unaudited.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import importlib.util
import json
import os
import pickle
import re
import secrets
import signal
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import typer
import yaml
from durable_harness import AEON
from fake_provider import FakeProvider, serving
from mcp import ClientSession, StdioServerParameters, stdio_client

from aeon.entrypoints.cli import app


def _plant(tag: str) -> str:
    return f"{tag}{secrets.token_hex(12)}"  # distinct: no two share a fragment of 8 characters


PLANTED = {
    "provider key (OPENAI_API_KEY)": _plant("sk-env-"),
    "service token (AUDIT_SERVICE_TOKEN)": _plant("svc"),
    "config key (llm.api_key)": _plant("sk-cfg-"),
    "request": _plant("rq"),
    "plan argument": _plant("arg"),
    "tool output header": _plant("hdr"),
    "tool output text": _plant("txt"),
    "tool error": _plant("err"),
    "model answer": _plant("mdl"),
    # credentials nobody configured, in a tool's output: blanked by their shape or the name they stand under
    "GitHub token": _plant("ghp_") + secrets.token_hex(6),
    "GitHub fine-grained token": _plant("github_pat_11"),
    "AWS access key id": "AKIA" + secrets.token_hex(8).upper(),
    "sk- key": _plant("sk-1"),
    "Slack bot token": _plant("xoxb-2-"),
    "JWT": f"eyJ{secrets.token_hex(6)}.eyJ{secrets.token_hex(6)}.{secrets.token_hex(8)}",
    "password in a URL": _plant("pw"),
    "value under an upper-cased name": _plant("up"),
    "PGPASSWORD= in text": _plant("pg"),
}
# The secrets the run is configured with: the only ones the caller's copy of a result is redacted of.
CONFIGURED = {k: v for k, v in PLANTED.items() if k.startswith(("provider key", "service token", "config key"))}
# What the process that ran the run is shown (a run started here, its result as the caller gets it): what the run
# produced reaches it whole (a request, a plan's arguments, a tool's output, a model's answer), configured secrets not.
CALLER = {"run: stdout", "run --durable: stdout", "run --no-durable: stdout", "replay: stdout"}
CALLER |= {"run (approve later): stdout", "run (deny later): stdout", "run (left waiting): stdout"}
CALLER |= {"run --thread: stdout", "run --thread --no-durable: stdout"}
_NAMES = ("env", "service", "config", "request", "args", "header", "text", "error", "model", "ghp", "pat", "akia", "sk")
_NAMES += ("xoxb", "jwt", "url", "upper", "pg")
S = dict(zip(_NAMES, PLANTED.values(), strict=True))
ROOT = Path(__file__).resolve().parents[2]
WINDOW = 8  # the longest run of a secret's characters allowed anywhere: "not one byte" short of chance matches
REQUEST = f"audit the service with api_key={S['request']}"

TOOLS = f'''
import os
import pathlib

from aeon.adapters.tools.decorator import tool


@tool(example={{"url": "https://api.example.invalid", "api_key": "k"}})
def fetch(url: str, api_key: str) -> dict:
    """Call the service with the key; answer with its headers and raw response."""
    with open(os.environ["AUDIT_SEEN"], "a") as seen:  # what the tool was given, for the test to check
        seen.write(api_key + "\\n")
    return {{
        "status": 200,
        "headers": {{"Authorization": "Bearer {S["header"]}", "Content-Type": "application/json"}},
        "raw": "HTTP/1.1 200 OK\\r\\nAuthorization: Bearer {S["text"]}\\r\\n",
        "whoami": "env " + os.environ["OPENAI_API_KEY"] + " svc " + os.environ["AUDIT_SERVICE_TOKEN"],
        "found": "{S["ghp"]} {S["pat"]} {S["akia"]} {S["sk"]} {S["xoxb"]} {S["jwt"]} PGPASSWORD={S["pg"]}",
        "remote": "https://bot:{S["url"]}@git.example.invalid/repo.git",
        "env": {{"DEPLOY_TOKEN": "{S["upper"]}"}},
    }}


@tool(example={{"target": "prod"}})
def deploy(target: str) -> str:
    """Deploy to the target."""
    raise RuntimeError("deploy to " + target + " refused: token={S["error"]} has expired")
'''
PLAN = {
    "goal": "audit the service",
    "steps": [
        {
            "step_id": "s1",
            "description": "Call the service",
            "tool": "fetch",
            "args": {"url": "https://api.example.invalid", "api_key": S["args"]},
        },
        {"step_id": "s2", "description": "Deploy", "tool": "deploy", "args": {"target": "prod"}},
        {"step_id": "s3", "description": "Summarise what s1 and s2 returned", "agent": "llm"},
    ],
}
ANSWER = f"Done: the key {S['config']} worked, the next call needs Authorization: Bearer {S['model']} and {S['env']}."
CONVERGED = {"issues": [], "completeness_score": 1.0, "coherence_score": 1.0, "consistent": True, "explanation": "ok"}
PROFILE = {
    "reasoning_depth": 1,
    "information_sufficiency": 1.0,
    "expected_tool_usage": "minimal",
    "output_breadth": "narrow",
    "confidence_requirement": "low",
    "raw_inference": "a service call",
}
KINDS = {
    "profile_and_plan": json.dumps({"profile": PROFILE, "plan": PLAN}),
    "task_profile": json.dumps(PROFILE),
    "plan": json.dumps(PLAN),
    "step_result": json.dumps({"answer": ANSWER, "clarity_state": "CLEAR", "handoff_to_next": ANSWER}),
    "evaluation": json.dumps(CONVERGED),
}


class RecordingProvider(FakeProvider):
    """The fake OpenAI-compatible provider, keeping every request body: the prompts are a sink too."""

    def __init__(self) -> None:
        super().__init__(kinds=KINDS)
        self.bodies: list[bytes] = []

    def answer_for(self, body: bytes) -> str:
        self.bodies.append(body)
        schema = (json.loads(body).get("response_format") or {}).get("json_schema") or {}
        return KINDS.get(schema.get("name", ""), ANSWER)


@dataclass
class Audit:
    """One folder, one provider, one config: every command runs in it and everything it shows is kept."""

    folder: Path
    provider: RecordingProvider
    config: Path
    plan: Path
    otel: bool
    streams: dict[str, str] = field(default_factory=dict)
    run_ids: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AEON_") and not k.endswith("_API_KEY")}
        env |= {"PYTHONPATH": os.pathsep.join([str(self.folder), str(ROOT / "src")])}  # this checkout's Aeon
        env |= {"AUDIT_SEEN": str(self.folder / "seen.txt")}
        return env | {"OPENAI_API_KEY": S["env"], "AUDIT_SERVICE_TOKEN": S["service"]}

    def aeon(self, name: str, *args: str | Path, codes: tuple[int, ...] = (0, 3)) -> str:
        done = subprocess.run(
            [*AEON, *map(str, args)], cwd=self.folder, env=self.env(), capture_output=True, text=True, timeout=180
        )
        self.streams[f"{name}: stdout"], self.streams[f"{name}: stderr"] = done.stdout, done.stderr
        assert done.returncode in codes, (name, done.returncode, done.stderr[-3000:])
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        return done.stdout


def _run(audit: Audit) -> None:
    """`aeon run` with every output on: --json, --history, the log, progress on stderr, OTel spans with content."""
    out = audit.aeon("run", "run", REQUEST, "--plan", audit.plan, "--config", audit.config, "--json", "--history",
                     audit.folder / "history.json")  # fmt: skip
    audit.run_ids["run"] = json.loads(out)["correlation_id"]


def _run_here(audit: Audit) -> None:
    """The same run in this process only: the log and --history, no record."""
    audit.aeon("run --no-durable", "run", REQUEST, "--plan", audit.plan, "--config", audit.config, "--no-durable",
               "--json", "--history", audit.folder / "here-history.json")  # fmt: skip


def _run_durable(audit: Audit) -> None:
    """The same run as a durable one: its workflow input, steps, checkpoints and outcome in the SQLite database."""
    out = audit.aeon("run --durable", "run", REQUEST, "--plan", audit.plan, "--config", audit.config, "--durable",
                     "--json", "--history", audit.folder / "durable-history.json")  # fmt: skip
    audit.run_ids["durable"] = json.loads(out)["correlation_id"]


def _approvals(audit: Audit) -> None:
    """The same run where `fetch` needs approval: it waits (its pending call, arguments and all, on the record and
    in --json), then one such run is approved from another process and one denied."""
    doc = yaml.safe_load(audit.config.read_text())
    doc["tools"]["approval"] = {"fetch": True}
    config = audit.folder / "inputs" / "approval.yaml"
    config.write_text(yaml.safe_dump(doc))
    for verdict in ("approve", "deny"):
        out = audit.aeon(f"run ({verdict} later)", "run", REQUEST, "--plan", audit.plan, "--config", config, "--json",
                         codes=(6,))  # fmt: skip
        run_id = json.loads(out)["correlation_id"]
        said = ("--args", json.dumps({"url": "https://api.example.invalid", "api_key": "edited"}))
        said = said if verdict == "approve" else ("--reason", "not with this key")
        audit.aeon(verdict, verdict, run_id, *said, "--config", config, "--json", codes=(0, 3, 7))  # 7: denied


def _inspect(audit: Audit) -> None:
    audit.aeon("inspect", "inspect", audit.folder / "history.json")
    audit.aeon("inspect --json", "inspect", audit.folder / "durable-history.json", "--json")


def _runs(audit: Audit) -> None:
    audit.aeon("runs", "runs", "--config", audit.config)
    audit.aeon("runs --json", "runs", "--config", audit.config, "--json")


def _resume(audit: Audit) -> None:
    """A finished run resumed: its recorded outcome, shown again."""
    audit.aeon("resume", "resume", audit.run_ids["durable"], "--config", audit.config, "--json", "--history",
               audit.folder / "resumed-history.json")  # fmt: skip


def _replay(audit: Audit) -> None:
    audit.aeon("replay", "replay", audit.run_ids["durable"], "--from-pass", "1", "--config", audit.config, "--json",
               "--history", audit.folder / "replay-history.json")  # fmt: skip


def _batch(audit: Audit) -> None:
    """A batch whose request holds a secret and whose model plans the call with the key in its arguments."""
    requests = audit.folder / "inputs" / "requests.jsonl"
    requests.write_text(json.dumps({"request": REQUEST}) + "\n")
    audit.aeon("batch", "batch", requests, "--config", audit.config, "--out", audit.folder / "batch.results.jsonl",
               codes=(0, 4))  # fmt: skip


def _validate(audit: Audit) -> None:
    """A plan whose argument does not fit: the problem quotes it."""
    wrong = json.loads(json.dumps(PLAN))
    wrong["steps"][0]["args"]["api_key"] = {"token": S["args"]}
    bad = audit.folder / "inputs" / "wrong-plan.json"
    bad.write_text(json.dumps(wrong))
    audit.aeon("validate", "validate", bad, "--config", audit.config, codes=(1,))


def _mcp(audit: Audit) -> None:
    """`aeon mcp` driven by the SDK's client: a run, a durable run, the runs, a resume and a validation, every
    result whole (text and structured content) and the server's stderr."""
    wrong = json.loads(json.dumps(PLAN))
    wrong["steps"][0]["args"]["api_key"] = {"token": S["args"]}
    calls = {
        "run": ("run", {"request": REQUEST, "plan": PLAN}),
        "run durable": ("run", {"request": REQUEST, "plan": PLAN, "durable": True}),
        "runs": ("runs", {}),
        "resume": ("resume", {"run_id": audit.run_ids["durable"]}),
        "validate": ("validate", {"plan": wrong}),
    }
    params = StdioServerParameters(
        command=AEON[0], args=[*AEON[1:], "mcp", "--config", str(audit.config)], env=audit.env(), cwd=audit.folder
    )

    async def talk() -> None:
        with (audit.folder / "mcp-stderr.txt").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                for name, (tool, arguments) in calls.items():
                    result = await client.call_tool(tool, arguments)
                    assert not result.is_error, (name, result.content)
                    audit.streams[f"mcp {name}"] = result.model_dump_json()

    anyio.run(talk)
    audit.streams["mcp: stderr"] = (audit.folder / "mcp-stderr.txt").read_text()


def _ui(audit: Audit) -> None:
    """`aeon ui` over everything the commands before recorded, and one more run left waiting for approval (its
    pending call shown with its arguments): the runs page, the batches, every run's page and every record it links
    to, the live feed of the waiting run, and the server's stderr."""
    approval = audit.folder / "inputs" / "approval.yaml"  # written by _approvals: fetch needs approval
    out = audit.aeon("run (left waiting)", "run", REQUEST, "--plan", audit.plan, "--config", approval, "--json",
                     codes=(6,))  # fmt: skip
    waiting = json.loads(out)["correlation_id"]
    server = subprocess.Popen([*AEON, "ui", "--port", "0", "--config", str(audit.config)], cwd=audit.folder,
                              env=audit.env(), stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert server.stderr is not None
    said = server.stderr.readline()
    try:
        found = re.search(r"(http://\S+)/ ", said)
        assert found is not None, said
        with httpx.Client(base_url=found.group(1), timeout=60) as client:
            pages = {path: client.get(path).text for path in ("/", "/batches")}
            links = set(re.findall(r'href="(/(?:runs|batches)/[^"?#]+)"', pages["/"] + pages["/batches"]))
            pages |= {path: client.get(path).text for path in sorted(links)}
            records = {
                r for text in list(pages.values()) for r in re.findall(r'href="(/runs/[^"]+/records/\d+)"', text)
            }
            pages |= {path: client.get(path).text for path in sorted(records)}
            with client.stream("GET", f"/runs/{waiting}/live?status=pending") as feed:
                pages["live feed"] = next(feed.iter_text())
        assert f"/runs/{waiting}" in links and records, sorted(links)
        assert "Waiting for your decision" in pages[f"/runs/{waiting}"]
        audit.streams |= {f"ui {path}": text for path, text in pages.items()}
    finally:
        server.send_signal(signal.SIGINT)
        _, rest = server.communicate(timeout=60)
        audit.streams["ui: stderr"] = said + rest


def _serve(audit: Audit) -> None:
    """`aeon serve`: a run POSTed with the secret in its request (the model plans the call with the key in its
    arguments), read back whole over HTTP — the run, the list, its event stream from the start, the OpenAPI
    document, the refusals of a key and of a value that does not fit — and the server's stderr."""
    server = subprocess.Popen([*AEON, "serve", "--port", "0", "--config", str(audit.config)], cwd=audit.folder,
                              env=audit.env(), stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert server.stderr is not None
    said = server.stderr.readline()
    try:
        found = re.search(r"(http://\S+)/ ", said)
        assert found is not None, said
        with httpx.Client(base_url=found.group(1), timeout=60) as client:
            run_id = client.post("/runs", json={"request": REQUEST}).json()["run_id"]
            with client.stream("GET", f"/runs/{run_id}/events") as feed:
                events = "".join(feed.iter_text())
            pages = {"events": events, "run": client.get(f"/runs/{run_id}").text, "runs": client.get("/runs").text}
            for field in ("api_key", "ttl"):  # refused naming the field, never quoting the value
                pages[f"refused {field}"] = client.post("/runs", json={"request": REQUEST, field: S["args"]}).text
            pages["openapi"] = client.get("/openapi.json").text
        assert '"run_end"' in events and json.loads(pages["run"])["result"] is not None, pages["run"]
        audit.streams |= {f"serve {name}": text for name, text in pages.items()}
    finally:
        server.send_signal(signal.SIGINT)
        _, rest = server.communicate(timeout=60)
        audit.streams["serve: stderr"] = said + rest


def _threads(audit: Audit) -> None:
    """Runs of a thread, durable and not (each later one's prompts hold the earlier requests, answers and step
    results: the thread's store in the system database), then the thread listed and shown."""
    for name, extra in (("run --thread", ()), ("run --thread --no-durable", ("--no-durable",))):
        audit.aeon(
            name, "run", REQUEST, "--config", audit.config, "--thread", "audit", "--json", *extra, codes=(0, 3, 4)
        )
    assert "audit     2 turn(s)" in audit.aeon("threads", "threads", "--config", audit.config)
    audit.aeon("threads show", "threads", "show", "audit", "--config", audit.config)
    audit.aeon("threads show --json", "threads", "show", "audit", "--config", audit.config, "--json")


def _schedule(audit: Audit) -> None:
    """A schedule of the request: what it keeps of the run (its recorded input) and what the list shows."""
    audit.aeon("schedule add", "schedule", "add", "0 7 * * *", REQUEST, "--name", "audit", "--config", audit.config)
    audit.aeon("schedule list", "schedule", "list", "--config", audit.config)
    audit.aeon("schedule list --json", "schedule", "list", "--config", audit.config, "--json")


# Every command that shows or stores run data, in the order they run (later ones read what earlier ones wrote).
SINKS: dict[str, Callable[[Audit], None]] = {
    "run": _run,
    "run --durable": _run_durable,
    "run --no-durable": _run_here,
    "inspect": _inspect,
    "approve": _approvals,  # and deny
    "runs": _runs,
    "resume": _resume,
    "replay": _replay,
    "batch": _batch,
    "validate": _validate,
    "mcp": _mcp,
    "ui": _ui,
    "serve": _serve,
    "threads": _threads,
    "schedule": _schedule,
}
# Commands that write no run data, and why.
NO_RUN_DATA = {
    "tools": "lists the tool specs of the configured modules (code the user wrote), never a run's data",
    "schema": "prints the JSON Schema of the log's records, generated from their types, never a run's data",
    "worker": "prints only its own start and stop lines; the runs it executes write the log and database audited "
    "through `batch`, which executes the same workflow",
}


def test_every_command_is_a_sink_of_the_audit_or_writes_no_run_data() -> None:
    commands = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    audited = {name.split()[0] for name in SINKS} | {"deny"}  # _approvals audits approve and deny
    assert commands == audited | set(NO_RUN_DATA), (
        f"not audited for secrets: {sorted(commands - audited - set(NO_RUN_DATA))}; "
        "add the command to SINKS in this test (or to NO_RUN_DATA, saying why it shows no run data)"
    )


@pytest.fixture
def audit(tmp_path: Path) -> Iterator[Audit]:
    otel = (
        importlib.util.find_spec("opentelemetry") is not None
        and importlib.util.find_spec("opentelemetry.sdk") is not None
    )
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (tmp_path / "audit_tools.py").write_text(TOOLS)
    plan = inputs / "plan.json"
    plan.write_text(json.dumps(PLAN))
    with serving(RecordingProvider()) as provider:
        doc: dict[str, Any] = {
            "llm": {"adapter": "openai", "base_url": provider.url, "model": "fake", "api_key": S["config"]},
            "run": {"ttl": 1, "max_llm_calls": 20},
            "tools": {"modules": ["audit_tools"]},
            "log": {"path": str(tmp_path / "runs.jsonl")},
        }
        if otel:  # the OTel console exporter with content capture writes the spans to stderr
            doc["otel"] = {"enabled": True, "exporter": "console", "capture_content": True}
        config = inputs / "aeon.yaml"
        config.write_text(yaml.safe_dump(doc))
        assert provider.url
        yield Audit(folder=tmp_path, provider=provider, config=config, plan=plan, otel=otel)


def test_no_planted_secret_reaches_any_output(audit: Audit) -> None:
    for sink in SINKS.values():
        sink(audit)

    places = {**audit.streams, **_files(audit.folder), **_database_rows(audit.folder / ".aeon" / "aeon.sqlite")}
    places |= {f"prompt {i}": body.decode() for i, body in enumerate(audit.provider.bodies)}
    leaks = [
        f"{what} in {where}: …{m}…"
        for where, text in places.items()
        for what, secret in (CONFIGURED if where in CALLER else PLANTED).items()
        if (m := _fragment(secret, text))
    ]
    assert not leaks, "\n".join(leaks)
    # the caller's copy: the execution that ran the tool shows what it produced whole, in the process or durable
    # (the durable record holds it redacted, which the database rows above were checked against)
    for where in ("run", "run --durable", "run --no-durable"):
        assert S["ghp"] in audit.streams[f"{where}: stdout"] and S["pg"] in audit.streams[f"{where}: stdout"], where
    assert all(
        S["request"] in audit.streams[f"{where}: stdout"] for where in ("run", "run --durable", "run --no-durable")
    )

    # The run did what it was asked: the tool got the real key (the redacted form only where the record was replayed)
    seen = (audit.folder / "seen.txt").read_text().splitlines()
    assert seen[:2] == [S["args"], S["args"]], seen
    assert set(seen) <= {S["args"], "[REDACTED]", "edited"}  # "edited": the arguments an approver gave
    assert audit.provider.bodies, "no prompt reached the provider"
    assert all(name in audit.streams for name in ("run: stderr", "replay: stdout", "batch: stderr", "mcp resume"))
    assert "[REDACTED]" in audit.streams["mcp run"]  # the secrets reached the server's result, blanked
    log = (audit.folder / "runs.jsonl").read_text()
    assert '"Authorization":"[REDACTED]"' in log and "Authorization: [REDACTED]" in log
    if audit.otel:
        assert '"gen_ai.tool.call.result"' in audit.streams["run: stderr"]  # the spans, with content, were written


def _fragment(secret: str, text: str) -> str | None:
    """A run of WINDOW characters of `secret` found in `text`, or None."""
    for i in range(len(secret) - WINDOW + 1):
        if secret[i : i + WINDOW] in text:
            return secret[i : i + WINDOW]
    return None


def _files(folder: Path) -> dict[str, str]:
    """Every file Aeon wrote under the folder, as text (bytes decoded with replacement), inputs left out."""
    skip = {folder / "inputs", folder / "audit_tools.py", folder / "seen.txt", folder / "__pycache__"}
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not any(path == s or s in path.parents for s in skip):
            found[f"file {path.relative_to(folder)}"] = path.read_bytes().decode("utf-8", "replace")
    assert any(name.startswith("file .aeon/") for name in found), "no system database was written"
    return found


def _database_rows(db: Path) -> dict[str, str]:
    """Every column of every row of every table, decoded: text, base64 text, pickles (DBOS's serialization)."""
    rows = {}
    with sqlite3.connect(db) as conn:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for n, row in enumerate(conn.execute(f'SELECT * FROM "{table}"')):
                rows[f"db {table} row {n}"] = "\n".join(_decoded(value) for value in row)
    assert any(k.startswith("db operation_outputs") for k in rows), sorted({k.rsplit(" row", 1)[0] for k in rows})
    return rows


def _decoded(value: object) -> str:
    """A value and every form it decodes to: its text, its base64 payload, the repr of what that unpickles to."""
    raw = value if isinstance(value, bytes) else str(value).encode()
    forms = [raw]
    if re.fullmatch(rb"[A-Za-z0-9+/=\s]{8,}", raw):
        with contextlib.suppress(binascii.Error, ValueError):
            forms.append(base64.b64decode(raw, validate=False))
    texts = []
    for form in forms:
        texts.append(form.decode("utf-8", "replace"))
        try:
            texts.append(_deep_repr(pickle.loads(form)))
        except Exception:  # not a pickle
            continue
    return "\n".join(texts)


def _deep_repr(value: object) -> str:
    """repr, with the attributes of the exceptions inside too (an exception's repr shows only its args)."""
    if isinstance(value, list | tuple):
        return "(" + ", ".join(map(_deep_repr, value)) + ")"
    if isinstance(value, BaseException):
        return f"{value!r} {vars(value)!r}"
    return repr(value)


# -- the caller's copy ------------------------------------------------------------------------------------------------
# What the run itself produced (a tool's answer holding a token or `password=…`) reaches the process that ran it
# whole: aeon.run's result, `aeon run`'s stdout and --json. Every durable or shared sink (the log, the record,
# --history, inspect, runs, ui) is fully redacted; a configured secret is redacted everywhere, the caller's copy too.
PRODUCED = f"{S['ghp']} password={S['pg']}"


def test_what_the_run_produced_reaches_the_python_caller_whole_and_the_log_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aeon
    from aeon import testing

    monkeypatch.setenv("OPENAI_API_KEY", S["env"])

    @aeon.tool
    def issue_token(user: str) -> str:
        """A new token for the user."""
        return f"{PRODUCED} for {user}; the provider key is {os.environ['OPENAI_API_KEY']}"

    step = {"step_id": "s1", "description": "Issue it", "tool": "issue_token", "args": {"user": "ann"}}
    llm = testing.answers(json.dumps({"goal": "test", "steps": [step]}))
    log = tmp_path / "runs.jsonl"

    result = aeon.run("a token for ann", tools=[issue_token], model=llm, config={"run": {"evaluate": False}},
                      log_file=str(log))  # fmt: skip

    output = str(result.outputs["s1"].output)
    assert PRODUCED in output, output  # the caller's copy: whole
    assert S["env"] not in output and "[REDACTED]" in output  # the configured key: redacted for the caller too
    written = log.read_text()
    assert not any(_fragment(secret, written) for secret in (S["ghp"], S["pg"], S["env"])), written
