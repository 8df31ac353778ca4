#!/usr/bin/env bash
# Build the stock Harbor venv: Python 3.12 (Harbor needs >= 3.12) with harbor==0.25.0 from the package registry.
# The tests use it as the reference for our Harbor formats: `harbor` CLI (lint, task migrate, view) and Harbor's
# own pydantic models (TaskConfig, JobConfig, JobResult, TrialResult, the ATIF Trajectory).
#
#   bash scripts/setup_harbor_venv.sh        prints the venv's python on stdout
#
# Environment: HARBOR_PYTHON (a Python >= 3.12; default: python3.12 on PATH, else pyenv's 3.12),
# TERMINAL_AGENT_HARBOR_VENV (where the venv goes), HARBOR_VERSION (default 0.25.0).
# Idempotent: a venv whose stamp matches the version is kept as it is.
set -euo pipefail
VERSION=${HARBOR_VERSION:-0.25.0}
VENV=${TERMINAL_AGENT_HARBOR_VENV:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/terminal-agent/harbor-venv}
log() { printf '[harbor-venv] %s\n' "$*" >&2; }

find_python() {
    if [ -n "${HARBOR_PYTHON:-}" ]; then echo "$HARBOR_PYTHON"; return; fi
    local candidate
    for candidate in python3.12 python3.13; do
        # a pyenv shim is on PATH for every version but runs only the selected ones: try it
        if "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1; then
            "$candidate" -c 'import sys; print(sys.executable)'; return
        fi
    done
    if command -v pyenv >/dev/null 2>&1; then
        for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.1[23]\.' || true); do
            candidate="$(pyenv root)/versions/$v/bin/python3"
            if [ -x "$candidate" ]; then echo "$candidate"; return; fi
        done
    fi
    return 1
}

stamp="$VENV/.terminal-agent-stamp"
if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "harbor==$VERSION" ]; then
    echo "$VENV/bin/python"
    exit 0
fi
base=$(find_python) || { log "no Python 3.12+ found (set HARBOR_PYTHON)"; exit 3; }
log "building $VENV with $("$base" --version 2>&1) and harbor==$VERSION ..."
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
"$base" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "harbor==$VERSION" 2>&1 | grep -v "^WARNING: Location" >&2 || true
"$VENV/bin/python" -c "import harbor, harbor.models.task.config" || { log "harbor does not import"; exit 1; }
printf 'harbor==%s\n' "$VERSION" >"$stamp"
echo "$VENV/bin/python"
