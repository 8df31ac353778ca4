#!/usr/bin/env bash
# The YAML schemas that training presets are validated against, without installing verl or Ray:
# the verl 0.9.1 wheel (pip download --no-deps) and rLLM's wheel, kept in the wheel cache that
# terminal_agent.training.verl.schema reads. Idempotent: returns at once when both are there.
#
# Environment: PYTHON, XDG_CACHE_HOME, TERMINAL_AGENT_RLLM_WHEELS (folder holding rLLM's wheels,
# default: ../shared/wheels beside the checkout).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-$(command -v python3 || command -v python)}
WHEELS=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/terminal-agent/wheels
SHARED=${TERMINAL_AGENT_RLLM_WHEELS:-$(pwd)/../shared/wheels}
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/verl-0.9.1-*.whl >/dev/null 2>&1; then
    echo "[setup] pip download --no-deps verl==0.9.1 (its trainer YAML) ..." >&2
    "$PYTHON" -m pip download -q --no-deps verl==0.9.1 -d "$WHEELS"
fi
if ! ls "$WHEELS"/rllm-0.3*.whl >/dev/null 2>&1; then
    if ls "$SHARED"/rllm-0.3*.whl >/dev/null 2>&1; then
        cp "$SHARED"/rllm-0.3*.whl "$WHEELS"/
    elif "$PYTHON" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('rllm') is None)"; then
        :  # rLLM is installed: its own YAML is read
    else
        echo "[setup] warning: no rLLM wheel in $SHARED and rllm is not installed; preset level-1 validation" \
             "needs one (set TERMINAL_AGENT_RLLM_WHEELS)" >&2
    fi
fi
