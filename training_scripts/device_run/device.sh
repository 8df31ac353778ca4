#!/usr/bin/env bash
# Device-side steps of the bwrap learning run (see README.md here). Run from the repository root:
#   bash training_scripts/device_run/device.sh stage .device_carry/partN [.device_carry/bundle.json]
#   bash training_scripts/device_run/device.sh setup       # unpack, wheels, bwrap, model (idempotent)
#   bash training_scripts/device_run/device.sh train OUT_COPY_DIR [trainer args ...]
#   bash training_scripts/device_run/device.sh experiment OUT_COPY_DIR [local_learning_experiment.py args ...]
#   bash training_scripts/device_run/device.sh env         # print the exports that setup made (for a shell)
# TA_TRAIN_TIMEOUT (default 480 s) bounds the trainer; TA_DEVICE_SKIP_WHEELS=1 skips the wheels (a CPU rehearsal).
# STAGE (default $HOME/ta-device-stage) lives outside the checkout, so it survives between calls on a warm machine.
set -euo pipefail
STAGE="${TA_DEVICE_STAGE:-${HOME:?HOME is unset}/ta-device-stage}"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$REPO/training_scripts/device_run"
PY="${PYTHON:-python3}"

environment() {
  export PATH="$STAGE/bwrap/usr/bin:$PATH"
  export PYTHONPATH="$REPO/src:$STAGE/site${PYTHONPATH:+:$PYTHONPATH}"
  export TERMINAL_AGENT_IMAGES_DIR="$STAGE/export"
  export PYTHONUNBUFFERED=1 WANDB_MODE=disabled TOKENIZERS_PARALLELISM=false
}

# bounded SCRIPT ARGS...: run a Python script under TA_TRAIN_TIMEOUT (before the call's 10-minute limit); sets rc.
bounded() {
  rc=0
  timeout -k 20 "${TA_TRAIN_TIMEOUT:-480}" "$PY" "$@" || rc=$?
  [ "$rc" = 124 ] && echo "stopped at ${TA_TRAIN_TIMEOUT:-480} s: run the same command again to resume (from the last checkpoint)"
  return 0
}
# out_arg ARGS...: the value after --out
out_arg() {
  local prev="" a
  for a in "$@"; do [ "$prev" = "--out" ] && echo "$a"; prev="$a"; done
  return 0
}
case "${1:-}" in
  stage)
    shift
    mkdir -p "$STAGE"
    for f in "$@"; do cp -f "$f" "$STAGE/"; echo "staged $(basename "$f") ($(stat -c %s "$f") bytes)"; done
    df -h "$STAGE" | tail -1
    ;;
  setup)
    t0=$(date +%s)
    "$PY" "$HERE/bundle.py" unpack "$STAGE"
    if [ -z "${TA_DEVICE_SKIP_WHEELS:-}" ] && [ ! -f "$STAGE/site/.installed" ]; then  # skip: a CPU rehearsal off the device
      "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$STAGE/site" "$STAGE"/whl/*.whl
      touch "$STAGE/site/.installed"
    fi
    [ -x "$STAGE/bwrap/usr/bin/bwrap" ] || dpkg-deb -x "$STAGE"/deb/bubblewrap_*.deb "$STAGE/bwrap"
    environment
    bwrap --version
    bwrap --ro-bind / / --unshare-all --die-with-parent true && echo "bwrap runs"
    if [ ! -f "$STAGE/model/.built" ]; then
      "$PY" "$HERE/model_from_gguf.py" build "$STAGE"/model/*.gguf "$STAGE/model/model_files" \
        "$STAGE/model/model_manifest.json" -o "$STAGE/model/bf16" || echo "WARNING: model tensors differ (see above)"
      touch "$STAGE/model/.built"
    fi
    "$PY" -c "import pydantic, tomlkit, torch, transformers, peft; print('pydantic', pydantic.VERSION, 'torch', torch.__version__, 'transformers', transformers.__version__, 'peft', peft.__version__, 'cuda', torch.cuda.is_available())"
    echo "setup done in $(( $(date +%s) - t0 )) s; model.path=$STAGE/model/bf16"
    ;;
  train)
    shift
    copy_to="$1"; shift
    environment
    mkdir -p "$copy_to"
    bounded "$HERE/train_steps.py" "$@"  # the run resumes from its last checkpoint next call
    run_dir="$(out_arg "$@")"  # whatever happened, bring back the metrics and the summary
    if [ -n "$run_dir" ] && [ -d "$run_dir" ]; then
      for f in metrics.jsonl summary.json curves.png; do [ -f "$run_dir/$f" ] && cp "$run_dir/$f" "$copy_to/"; done
      [ -f "$run_dir/metrics.jsonl" ] && "$PY" "$HERE/summarize_step_times.py" "$run_dir/metrics.jsonl" > "$copy_to/step_times.txt"  # train_steps.py printed it already
    fi
    exit $rc
    ;;
  experiment)
    shift
    copy_to="$1"; shift
    environment
    mkdir -p "$copy_to"
    # the learning experiment (train, then base / warm start / trained on the held-out tasks); a stopped run
    # resumes its training from the last checkpoint on the same --out, and a finished seed is skipped
    bounded "$REPO/training_scripts/local_learning_experiment.py" "$@"
    out_dir="$(out_arg "$@")"
    if [ -n "$out_dir" ] && [ -d "$out_dir" ]; then  # at most 8 files of 16 MiB come back: two tars
      (cd "$out_dir" && find . -path '*/transcripts' -prune -o -path '*/checkpoints' -prune -o \
        \( -name '*.json' -o -name '*.jsonl' -o -name '*.md' \) -print0 | tar --null -czf "$copy_to/experiment.tgz" --files-from=-) || true
      (cd "$out_dir" && find . -path '*/transcripts/*' -name '*.json' -print0 | tar --null -cJf "$copy_to/transcripts.txz" --files-from=-) || true
      for m in "$out_dir"/seed_*/train/metrics.jsonl "$out_dir"/train/metrics.jsonl; do
        [ -f "$m" ] && "$PY" "$HERE/summarize_step_times.py" "$m" > "$copy_to/step_times_$(basename "$(dirname "$(dirname "$m")")").txt"
      done
    fi
    exit $rc
    ;;
  env)
    environment
    echo "export PATH=$PATH PYTHONPATH=$PYTHONPATH TERMINAL_AGENT_IMAGES_DIR=$TERMINAL_AGENT_IMAGES_DIR"
    ;;
  *)
    sed -n '2,7p' "$0"; exit 2
    ;;
esac
