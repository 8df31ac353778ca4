#!/usr/bin/env bash
# Evaluate the agent on tasks and report pass rates with confidence intervals.
#
#   ./evaluation/run_eval.sh                      # the embedded SmolLM2 on dataset/latest_verified.csv
#   LITELLM_MODEL=openai/gpt-4o-mini ./evaluation/run_eval.sh -k 4
#   LITELLM_MODEL=openai/my-model LITE_LLM_API_BASE=http://host:8000/v1 ./evaluation/run_eval.sh
#
# Flags (or the environment variable in brackets):
#   --tasks PATH        tasks file or directory             [TASKS]        dataset/latest_verified.csv
#   -k, --attempts N    attempts per task                   [ATTEMPTS]     1
#   -c, --concurrency N episodes at once                    [CONCURRENCY]  2
#   --max-steps N       model turns per episode             [MAX_STEPS]    5 (embedded), 20 (litellm)
#   --max-tokens N      cap on tokens per reply             [MAX_TOKENS]   128 (embedded), provider default otherwise
#   --temperature T     sampling temperature                [TEMPERATURE]  backend default (greedy for embedded)
#   -o, --output-dir D  where results go                    [OUTPUT_DIR]   runs/eval-<timestamp>
#   --model SPEC        'embedded' or a litellm model       [LITELLM_MODEL] embedded when unset
# Anything after `--` goes to `terminal-agent eval run` unchanged (e.g. -- --task fix-stats-script).
set -euo pipefail

script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
here="$(dirname "$script")"
cd "$here/.."

model="${LITELLM_MODEL:-}"
tasks="${TASKS:-dataset/latest_verified.csv}"
attempts="${ATTEMPTS:-1}"
concurrency="${CONCURRENCY:-2}"
max_steps="${MAX_STEPS:-}"
max_tokens="${MAX_TOKENS:-}"
temperature="${TEMPERATURE:-}"
output_dir="${OUTPUT_DIR:-runs/eval-$(date -u +%Y%m%dT%H%M%SZ)}"
extra=()

# The usage is the comment block at the top of this file (line 2 up to the first line that is not a comment).
usage() { awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$script"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --tasks) tasks="$2"; shift 2 ;;
    -k|--attempts) attempts="$2"; shift 2 ;;
    -c|--concurrency) concurrency="$2"; shift 2 ;;
    --max-steps) max_steps="$2"; shift 2 ;;
    --max-tokens) max_tokens="$2"; shift 2 ;;
    --temperature) temperature="$2"; shift 2 ;;
    -o|--output-dir) output_dir="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra+=("$@"); break ;;
    *) echo "run_eval.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

if [[ -z "$model" || "$model" == "embedded" ]]; then
  model="embedded"
  max_steps="${max_steps:-5}"
  max_tokens="${max_tokens:-128}"
else
  max_steps="${max_steps:-20}"
fi

args=(eval run "$tasks" --model "$model" --attempts "$attempts" --concurrency "$concurrency"
      --max-steps "$max_steps" --output-dir "$output_dir")
[[ -n "$max_tokens" ]] && args+=(--max-tokens "$max_tokens")
[[ -n "$temperature" ]] && args+=(--temperature "$temperature")
[[ -n "${LITE_LLM_API_BASE:-}" ]] && args+=(--api-base "$LITE_LLM_API_BASE")

if command -v terminal-agent >/dev/null 2>&1; then
  cli=(terminal-agent)
else
  cli=(python -m terminal_agent)
fi
echo "+ ${cli[*]} ${args[*]} ${extra[*]:-}" >&2
exec "${cli[@]}" "${args[@]}" "${extra[@]}"
