#!/usr/bin/env bash
# Install verl 0.9.1 (the version the training pins resolve to) and the few packages its
# `verl.trainer.ppo.core_algos` needs to import on CPU into a private cache directory, so the local
# trainer's advantage/loss tests can call verl's own functions. --no-deps and a --target outside
# the project's environment: nothing of the main environment changes (no vLLM, no CUDA build).
# Idempotent: returns at once when the stamp matches.
#
#   bash scripts/setup_verl_reference.sh        (prints nothing when already done)
#
# Environment: PYTHON (default python3), VERL_REFERENCE_DIR (default <cache>/terminal-agent/verl-reference-0.9.1).
set -euo pipefail
PYTHON=${PYTHON:-$(command -v python3 || command -v python)}
DIR=${VERL_REFERENCE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/terminal-agent/verl-reference-0.9.1}
PACKAGES="verl==0.9.1 omegaconf==2.4.0 antlr4-python3-runtime==4.9.3 tensordict==0.15.3 cloudpickle==3.1.3 \
pyvers==0.2.3 orjson==3.13.0 codetiming==1.4.0 msgpack==1.2.4 ray==2.60.0"
want=$(printf '%s' "$PACKAGES" | sha256sum | cut -c1-16)
if [ -f "$DIR/stamp" ] && [ "$(cat "$DIR/stamp")" = "$want" ]; then
    exit 0
fi
printf '[setup] installing the verl %s reference for the algorithm tests into %s ...\n' 0.9.1 "$DIR" >&2
rm -rf "$DIR.tmp" && mkdir -p "$DIR.tmp"
# shellcheck disable=SC2086
"$PYTHON" -m pip install -q --disable-pip-version-check --no-deps --target "$DIR.tmp/site" $PACKAGES
# the real module must import here (a broken install fails the set-up, not a test later)
PYTHONPATH="$DIR.tmp/site" "$PYTHON" -c "import verl.trainer.ppo.core_algos" 2>/dev/null \
    || { printf '[setup] error: verl.trainer.ppo.core_algos does not import from %s\n' "$DIR.tmp/site" >&2; exit 1; }
printf '%s\n' "$want" >"$DIR.tmp/stamp"
rm -rf "$DIR" && mv "$DIR.tmp" "$DIR"
