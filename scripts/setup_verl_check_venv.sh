#!/usr/bin/env bash
# A throwaway venv where verl 0.9.1's config module imports, for level-2 preset validation
# (verl.utils.config.validate_config) on a machine without GPUs: verl --no-deps plus the packages
# its import chain needs (torch CPU, Ray, transformers < 5.11, tensordict <= 0.10, ...). No vLLM:
# verl's LoRA rank check is then skipped and said so. About 1.3 GB, a minute or two the first time;
# stamp-checked afterwards. The tests find it at the path below (or TERMINAL_AGENT_VERL_PYTHON).
# Then the sibling venv of the CPU verl launch (scripts/setup_verl_launch_venv.sh: verl + rLLM HEAD over this
# machine's packages), which the rehearsal test drives; it needs rLLM's wheel and is skipped, said so, without it.
set -euo pipefail
launch_venv() {
    bash "$(dirname "${BASH_SOURCE[0]}")/setup_verl_launch_venv.sh" >/dev/null \
        || echo "[setup] the verl launch venv was not built (exit $?); the CPU launch test will say why" >&2
}
PYTHON=${PYTHON:-$(command -v python3 || command -v python)}
VENV=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/terminal-agent/verl-check-venv
PACKAGES=(verl==0.9.1 torch==2.13.0 ray==2.60.0 hydra-core omegaconf packaging numpy "tensordict>=0.8,<=0.10,!=0.9.0"
          "transformers<5.11" codetiming orjson datasets pillow)
WANT=$(printf '%s\n' "${PACKAGES[@]}" | sha256sum | cut -c1-16)
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.stamp" 2>/dev/null)" = "$WANT" ]; then
    launch_venv
    exit 0
fi
echo "[setup] building the level-2 verl check venv in $VENV ..." >&2
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --no-deps verl==0.9.1
"$VENV/bin/python" -m pip install -q "${PACKAGES[@]:1}"
"$VENV/bin/python" -c "import verl.utils.config, verl.trainer.ppo.utils" >/dev/null
printf '%s\n' "$WANT" >"$VENV/.stamp"
launch_venv
