#!/usr/bin/env bash
# Build the two rLLM conformance venvs: rLLM HEAD (0.3.0rc0) and v0.2.1, each from its wheel,
# installed --no-deps over this machine's packages (--system-site-packages: torch, transformers,
# docker and terminal-agent itself come from the main interpreter), plus the light packages rLLM's
# imports ask for. rLLM is not on the package registry; its whole declared dependency set does not
# resolve with pip, so this is the supported way to run our classes through the real rLLM.
#
#   bash scripts/setup_rllm_venvs.sh        prints one line per venv: NAME PYTHON
#
# Environment: PYTHON (base interpreter), TERMINAL_AGENT_RLLM_WHEELS (folder of the wheels,
# default ../shared/wheels beside the checkout), TERMINAL_AGENT_RLLM_VENVS (where the venvs go).
# Idempotent: a venv whose stamp matches its wheel's hash is kept as it is (about 0.1 s).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-$(command -v python3 || command -v python)}
WHEELS=${TERMINAL_AGENT_RLLM_WHEELS:-$(pwd)/../shared/wheels}
VENVS=${TERMINAL_AGENT_RLLM_VENVS:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/terminal-agent/rllm-venvs}
LIGHT_DEPS=(codetiming omegaconf hydra-core pylatexenc polars openai httpx)

log() { printf '[rllm-venvs] %s\n' "$*" >&2; }

if [ ! -d "$WHEELS" ]; then
    log "no rLLM wheels at $WHEELS (set TERMINAL_AGENT_RLLM_WHEELS)"
    exit 3
fi

build() {  # build NAME WHEEL_GLOB
    local name=$1 pattern=$2 wheel venv stamp wanted
    wheel=$(ls "$WHEELS"/$pattern 2>/dev/null | head -n1 || true)
    if [ -z "$wheel" ]; then
        log "no wheel matching $pattern in $WHEELS"
        exit 3
    fi
    venv="$VENVS/$name"
    stamp="$venv/.terminal-agent-stamp"
    wanted="$(sha256sum "$wheel" | cut -c1-16) ${LIGHT_DEPS[*]}"
    if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
        printf '%s %s\n' "$name" "$venv/bin/python"
        return
    fi
    log "building $name from $(basename "$wheel") ..."
    rm -rf "$venv"
    mkdir -p "$VENVS"
    "$PYTHON" -m venv --system-site-packages "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "$wheel"
    # only what is missing from the base interpreter gets installed
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "${LIGHT_DEPS[@]}"
    "$venv/bin/python" -c "import rllm.agents.agent, rllm.workflows.workflow, rllm.engine.rollout.rollout_engine" \
        || { log "$name: rllm does not import"; exit 1; }
    printf '%s\n' "$wanted" >"$stamp"
    printf '%s %s\n' "$name" "$venv/bin/python"
}

build head 'rllm-0.3.0*.whl'
build v021 'rllm-0.2.1*.whl'
