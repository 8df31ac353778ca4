#!/usr/bin/env bash
# A venv where the real verl launch of a preset runs on a machine without GPUs (launch_training.py --rehearse):
# this interpreter's packages (--system-site-packages: torch CPU, Ray, terminal-agent's own dependencies) plus
# verl 0.9.1 and rLLM HEAD (0.3.0rc0, from its wheel) installed --no-deps, and what their import chains ask
# for that the base lacks (tensordict, torchdata, datasets, codetiming, cachetools, ...).
# No vLLM: the rehearsal stops where vLLM is first needed. Stamp-checked: a second run returns at once.
#
#   bash scripts/setup_verl_launch_venv.sh        prints the venv's python
#
# Environment: PYTHON (base interpreter), TERMINAL_AGENT_RLLM_WHEELS (folder of rLLM's wheels, default
# ../shared/wheels beside the checkout), TERMINAL_AGENT_VERL_LAUNCH_VENV (where the venv goes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-$(command -v python3 || command -v python)}
WHEELS=${TERMINAL_AGENT_RLLM_WHEELS:-$(pwd)/../shared/wheels}
VENV=${TERMINAL_AGENT_VERL_LAUNCH_VENV:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/terminal-agent/verl-launch-venv}
# what verl's and rLLM's imports need beyond the base (tensordict inside verl's pin); the rest only when missing.
# transformers stays the base's: verl's <5.11 pin is metadata only (5.17 runs on the GPU node), and an older one
# here would shadow the base's tokenizers, huggingface_hub and kernels packages with versions they do not fit.
PACKAGES=("tensordict>=0.8,<=0.10,!=0.9.0" torchdata datasets codetiming dill cachetools pybind11 pylatexenc polars
          "ray[default]==2.60.0" hydra-core)

log() { printf '[verl-launch-venv] %s\n' "$*" >&2; }

wheel=$(ls "$WHEELS"/rllm-0.3.0*.whl 2>/dev/null | head -n1 || true)
if [ -z "$wheel" ]; then
    log "no rLLM HEAD wheel (rllm-0.3.0*.whl) in $WHEELS (set TERMINAL_AGENT_RLLM_WHEELS)"
    exit 3
fi
WANT="$(sha256sum "$wheel" | cut -c1-16) verl==0.9.1 $("$PYTHON" -c 'import sys; print(sys.version.split()[0])') ${PACKAGES[*]}"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.stamp" 2>/dev/null)" = "$WANT" ]; then
    printf '%s\n' "$VENV/bin/python"
    exit 0
fi
log "building the verl launch venv in $VENV (verl 0.9.1 + $(basename "$wheel") over $PYTHON) ..."
rm -rf "$VENV"
"$PYTHON" -m venv --system-site-packages "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps verl==0.9.1 "$wheel"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PACKAGES[@]}"
"$VENV/bin/python" -c "import verl.trainer.ppo.ray_trainer, rllm.trainer.agent_trainer, rllm.trainer.verl.train_agent_ppo" \
    || { log "verl / rLLM do not import in $VENV"; exit 1; }
printf '%s\n' "$WANT" >"$VENV/.stamp"
printf '%s\n' "$VENV/bin/python"
