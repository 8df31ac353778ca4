#!/usr/bin/env bash
# Device-side steps of the bwrap learning run (see README.md here). Run from the repository root:
#   bash training_scripts/device_run/device.sh stage .device_carry/partN [.device_carry/bundle.json]
#   bash training_scripts/device_run/device.sh setup       # unpack, wheels, bwrap, model (idempotent)
#   bash training_scripts/device_run/device.sh train OUT_COPY_DIR [trainer args ...]
#   bash training_scripts/device_run/device.sh experiment OUT_COPY_DIR [local_learning_experiment.py args ...]
#   bash training_scripts/device_run/device.sh env         # print the exports that setup made (for a shell)
#   bash training_scripts/device_run/device.sh runtime     # unpack the staged rLLM + verl + vLLM runtime (verl_runtime.py)
#   bash training_scripts/device_run/device.sh warmstart OUT_COPY_DIR RUN_DIR [local_1gpu overrides ...]
#                                                          # SFT warm start, merged into a plain model dir RUN_DIR/merged
#   bash training_scripts/device_run/device.sh verl OUT_COPY_DIR RUN_DIR [launch_training.py args ...]
#                                                          # start a verl run in its own session, then wait (see wait)
#   bash training_scripts/device_run/device.sh wait OUT_COPY_DIR RUN_DIR   # wait for it (TA_WAIT_S), copy results out
#   bash training_scripts/device_run/device.sh evalexport OUT_COPY_DIR RUN_DIR CHECKPOINT [eval run args ...]
#                                                          # export a verl checkpoint, evaluate it on held-out + train tasks
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

# The verl path: the unpacked runtime first on PYTHONPATH (its dist-info pins what importlib.metadata reads),
# and the settings vLLM and Ray need on a node without flashinfer or a network (device/verl-on-h200.md).
verl_environment() {
  environment
  export PYTHONPATH="$STAGE/rt:$PYTHONPATH"
  export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 VLLM_USE_FLASHINFER_SAMPLER=0 \
    VLLM_HOST_IP=127.0.0.1 RAY_memory_monitor_refresh_ms=0 RLLM_HOME="$STAGE/rllm_home" RAY_DEDUP_LOGS=0 \
    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
}

# copy_verl_results COPY_DIR RUN_DIR: what comes back of a verl run (at most 8 files: the metrics, the launch log,
# the step table twice, the dry run, the mask check twice, and the rollouts or Ray's logs)
copy_verl_results() {
  local copy_to=$1 run_dir=$2
  mkdir -p "$copy_to"
  for f in verl_metrics.jsonl launch.log; do [ -f "$run_dir/$f" ] && cp "$run_dir/$f" "$copy_to/"; done
  [ -f "$run_dir/verl_metrics.jsonl" ] && "$PY" "$HERE/summarize_verl_steps.py" "$run_dir/verl_metrics.jsonl" \
    --json "$copy_to/verl_steps.json" > "$copy_to/verl_steps.txt" 2>&1
  [ -f "$run_dir/launch/dry_run.yaml" ] && cp "$run_dir/launch/dry_run.yaml" "$copy_to/"
  # the step profile (TA_PROFILE_AFTER_STEP) and the runtime's comparison with the lock, in one text file
  if ls "$run_dir"/profile_*_*.txt >/dev/null 2>&1 || [ -f "$STAGE/node_check.txt" ]; then
    { cat "$STAGE/node_check.txt" 2>/dev/null
      [ -s "$run_dir/profile_gpu.csv" ] && awk -F', ' '{n++; u+=$2; if ($2 >= 50) busy++} END {if (n) printf "GPU utilization over the profile window: mean %.1f%%, %d of %d samples >= 50%%\n", u/n, busy, n}' "$run_dir/profile_gpu.csv"
      ls "$run_dir"/profile_*_*.txt >/dev/null 2>&1 && "$PY" "$HERE/summarize_profile.py" "$run_dir"/profile_*_*.txt
      tar -czf "$run_dir/profiles.tgz" -C "$run_dir" $(cd "$run_dir" && ls profile_*_*.txt 2>/dev/null) 2>/dev/null || true
    } > "$copy_to/profile.txt" 2>&1
  fi
  # with trainer.log_episodes=true trainer.episode_log_dir=RUN_DIR/episode_log: the rows rLLM printed of each
  # step's batch, checked token for token against the logged episodes and the model's template
  if [ -d "$run_dir/episode_log" ] && [ -f "$run_dir/launch.log" ]; then
    local model=""; [ -d "$run_dir/model_for_rllm" ] && model="--model $run_dir/model_for_rllm"
    "$PY" "$HERE/check_response_masks.py" "$run_dir/launch.log" "$run_dir/episode_log" $model \
      --json "$copy_to/masks.json" > "$copy_to/masks.txt" 2>&1 || true
  fi
  # the Workflow's training rollouts as Harbor jobs (trainer.harbor_rollouts): checked here with stock Harbor
  if [ -d "$run_dir/rollouts" ]; then
    tar -czf "$copy_to/rollouts.tgz" -C "$run_dir" rollouts 2>/dev/null || true
    [ "$(stat -c %s "$copy_to/rollouts.tgz" 2>/dev/null || echo 0)" -lt 15000000 ] || \
      { rm -f "$copy_to/rollouts.tgz"; (cd "$run_dir" && find rollouts -maxdepth 2) > "$copy_to/rollouts_list.txt"; }
  fi
  # Ray's logs only when the run did not end cleanly (at most 8 files come back a call)
  if [ -d /tmp/ray/session_latest/logs ] && [ "$(cat "$run_dir/launch.rc" 2>/dev/null)" != "exit 0" ]; then
    tar -czhf "$copy_to/ray_logs.tgz" -C /tmp/ray/session_latest logs 2>/dev/null || true
    [ "$(stat -c %s "$copy_to/ray_logs.tgz" 2>/dev/null || echo 0)" -lt 15000000 ] || rm -f "$copy_to/ray_logs.tgz"
  fi
  return 0
}

# wait_for_run COPY_DIR RUN_DIR: wait until the run's process ends or TA_WAIT_S passes; print its log's tail
wait_for_run() {
  local copy_to=$1 run_dir=$2 pid waited=0
  pid=$(cat "$run_dir/launch.pid" 2>/dev/null || true)
  while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "${TA_WAIT_S:-540}" ]; do
    sleep 5; waited=$((waited + 5))
    # TA_PROFILE_AFTER_STEP=N: once step N is logged, sample every Ray worker of the run (the FSDP actor, the
    # TaskRunner) with py-spy for TA_PROFILE_S seconds, wall time included (--idle); summarized into the results
    if [ -n "${TA_PROFILE_AFTER_STEP:-}" ] && [ ! -f "$run_dir/profile.started" ] && [ -f "$run_dir/launch.log" ] && \
       grep -aq "step:$TA_PROFILE_AFTER_STEP - " "$run_dir/launch.log"; then
      touch "$run_dir/profile.started"
      # the actor's workers, and the TaskRunner itself (pgrep -o: its forked helpers share its title)
      for wpid in $(pgrep -f "ray::WorkerDict" || true) $(pgrep -o -f "ray::TaskRunner" || true); do
        name=$(tr '\0' ' ' < "/proc/$wpid/cmdline" 2>/dev/null | grep -o 'ray::[A-Za-z]*' | head -1 | tr -cd 'A-Za-z')
        "$STAGE/rt/bin/py-spy" record --idle --nonblocking -r 50 -d "${TA_PROFILE_S:-30}" -f raw \
          -o "$run_dir/profile_${name}_${wpid}.txt" -p "$wpid" > "$run_dir/profile_${wpid}.log" 2>&1 &
      done
      # the GPU's own view over the same window: busy share and memory, every 200 ms
      timeout "${TA_PROFILE_S:-30}" nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits \
        -lms 200 > "$run_dir/profile_gpu.csv" 2>/dev/null &
      echo "profiling the run's workers for ${TA_PROFILE_S:-30} s after step $TA_PROFILE_AFTER_STEP ($(date +%T))"
    fi
    # TA_KILL_AFTER_STEP=N: the resume drill: once step N is logged, SIGKILL the run a few seconds into the
    # next step (its whole session, then Ray's daemons), as a crash would; 'verl' again with
    # trainer.resume_mode=auto goes on from the last checkpoint
    # (the step's console line, "step:N - ...": verl's file logger buffers its lines, so the jsonl lags steps)
    if [ -n "${TA_KILL_AFTER_STEP:-}" ] && [ -f "$run_dir/launch.log" ] && \
       grep -aq "step:$TA_KILL_AFTER_STEP - " "$run_dir/launch.log"; then
      sleep "${TA_KILL_DELAY_S:-4}"
      echo "killing the run (SIGKILL to session $pid) $(date +%T), ${TA_KILL_DELAY_S:-4} s after step $TA_KILL_AFTER_STEP was logged"
      kill -9 -- "-$pid" 2>/dev/null || kill -9 "$pid"
      "$PY" -c 'import sys; from ray.scripts.scripts import main; sys.argv = ["ray", "stop", "--force"]; main()' >/dev/null 2>&1 || true
      echo "killed by the resume drill after step $TA_KILL_AFTER_STEP" > "$run_dir/launch.rc"
      break
    fi
  done
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    echo "the run is still going after ${waited} s (pid $pid): call 'wait' again"
  else
    echo "the run ended: $(cat "$run_dir/launch.rc" 2>/dev/null || echo 'no exit status recorded')"
  fi
  copy_verl_results "$copy_to" "$run_dir"
  tail -n 40 "$run_dir/launch.log" 2>/dev/null || true
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
  runtime)
    t0=$(date +%s)
    "$PY" "$HERE/verl_runtime.py" unpack "$STAGE" "$STAGE/rt"
    # what runs against the lock: each package the lock pins, as the unpacked runtime + the node show it
    "$PY" "$HERE/verl_runtime.py" node-check "$STAGE/rt" > "$STAGE/node_check.txt" 2>&1 || true
    head -n 30 "$STAGE/node_check.txt"
    verl_environment
    "$PY" -c "import importlib.metadata as m, time; t = time.time(); import vllm, verl, ray, rllm, hydra; print(', '.join(f'{n} {m.version(n)}' for n in ('vllm', 'verl', 'ray', 'rllm', 'torch', 'transformers', 'pydantic')), f'imported in {time.time() - t:.1f} s')"
    echo "runtime ready in $(( $(date +%s) - t0 )) s"
    ;;
  warmstart)
    shift
    copy_to="$1"; run_dir="$2"; shift 2
    environment
    mkdir -p "$copy_to"
    bounded "$HERE/train_steps.py" local_1gpu --out "$run_dir" --only-exported local.steps=1 "$@"
    [ "$rc" = 0 ] || exit $rc
    "$PY" -c "import sys; from terminal_agent.training.local.model_export import export_merged_model as e; r = e(sys.argv[1], sys.argv[2], model=sys.argv[3], dtype='bfloat16', force=True); print('merged', r.parameters, 'parameters into', r.out_dir)" \
      "$run_dir/warm_start" "$run_dir/merged" "$STAGE/model/bf16"
    [ -f "$run_dir/summary.json" ] && cp "$run_dir/summary.json" "$copy_to/warmstart_summary.json"
    ;;
  verl)
    shift
    copy_to="$1"; run_dir="$2"; shift 2
    verl_environment
    mkdir -p "$run_dir" "$copy_to"
    export VERL_FILE_LOGGER_PATH="$run_dir/verl_metrics.jsonl"
    # its own session: the run outlives this call while the machine stays warm, and 'wait' picks it up
    rm -f "$run_dir/launch.rc"
    RUN_DIR="$run_dir" setsid bash -c 'timeout -k 30 "$0" "$1" "$2" "${@:3}" > "$RUN_DIR/launch.log" 2>&1; echo "exit $?" > "$RUN_DIR/launch.rc"' \
      "${TA_VERL_TIMEOUT:-1500}" "$PY" "$REPO/training_scripts/launch_training.py" "$@" < /dev/null > /dev/null 2>&1 &
    echo $! > "$run_dir/launch.pid"
    echo "started pid $(cat "$run_dir/launch.pid") at $(date +%T)"
    wait_for_run "$copy_to" "$run_dir"
    ;;
  wait)
    shift
    verl_environment
    wait_for_run "$1" "$2"
    ;;
  evalexport)
    # evalexport OUT RUN_DIR CHECKPOINT [eval run args ...]: the verl checkpoint exported to a plain model
    # directory, then evaluated on the run's held-out tasks (RUN_DIR/data/val.parquet) and on 40 of its train tasks
    shift
    copy_to="$1"; run_dir="$2"; checkpoint="$3"; shift 3
    environment
    mkdir -p "$copy_to"
    t0=$(date +%s)
    # (from Python: on the node the package has no installed metadata, and the CLI's entry looks it up)
    "$PY" -c "import sys; from terminal_agent.training.verl.checkpoint_export import export_verl_checkpoint as e; print(e(sys.argv[1], sys.argv[2], force=True))" \
      "$checkpoint" "$run_dir/exported" 2>&1 | tail -n 3
    echo "export took $(( $(date +%s) - t0 )) s"
    for split in val train; do
      limit=""; [ "$split" = train ] && limit="--limit 40"
      timeout -k 20 "${TA_TRAIN_TIMEOUT:-480}" "$PY" -c "import sys; from typer.main import get_command; import terminal_agent.cli as c; get_command(c.app).main(sys.argv[1:], prog_name='terminal-agent')" \
        eval run "$run_dir/data/$split.parquet" --model "$run_dir/exported" --device cuda --dtype bfloat16 --sandbox bwrap \
        --images-dir "$STAGE/export" --no-plot --no-harbor -o "$run_dir/eval_$split" $limit "$@" > "$copy_to/eval_$split.log" 2>&1 \
        || echo "eval $split: exit $?"
      [ -f "$run_dir/eval_$split/report.md" ] && cp "$run_dir/eval_$split/report.md" "$copy_to/${split}_report.md"
      tail -n 15 "$copy_to/eval_$split.log"
    done
    ;;
  env)
    environment
    echo "export PATH=$PATH PYTHONPATH=$PYTHONPATH TERMINAL_AGENT_IMAGES_DIR=$TERMINAL_AGENT_IMAGES_DIR"
    ;;
  *)
    sed -n '2,7p' "$0"; exit 2
    ;;
esac
