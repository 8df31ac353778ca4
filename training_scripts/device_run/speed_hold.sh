#!/usr/bin/env bash
# The verl step on the node, before and after (issue 45), in one hold: run after the staging calls of the
# runtime (rt-part01..06 + verl_runtime.json) and the bundle (part1..3), with part4 and bundle.json carried.
#
#   bash training_scripts/device_run/speed_hold.sh fast [KEY=VALUE ...]  # setup, runtime (+ node-check), the packed-
#          # attention GPU tests, the warm start, then verl_1gpu as it ships plus the given preset keys (20 steps;
#          # next: model.fused_kernels=torch, the fix of what the 2026-12-07 profile found)
#   bash training_scripts/device_run/speed_hold.sh bench    # the runtime only: verl's log-prob paths timed on CUDA
#   bash training_scripts/device_run/speed_hold.sh bypass [KEY=VALUE ...]  # wait for that run, then 6 steps with the
#          # sampler's log-probs as the old ones (algorithm.old_log_probs=sampler, rLLM's rollout-correction bypass)
#   bash training_scripts/device_run/speed_hold.sh padded   # wait for that run, then the padded sdpa baseline (5 steps)
#
# As run on 2026-12-07 (H100): 'fast' took 571 s (setup 72 s, runtime 33 s, GPU tests 33 s, warm start ~3 min, the run
# from Ray's start to the end of step 1 about 5 min), and one 'wait' call of 442 s brought steps 1-6 back; the
# session's device time then ran out (docs/results/verl_1gpu_h100_packed). Plan about 22 minutes for both.
# Results under $OUT: setup/runtime/gpu-test/warm-start logs, a/ (the fast run) and b/ (the baseline), each with
# verl_metrics.jsonl, the step table, the dry run, rollouts.tgz and profile.txt (py-spy over 30 s after step 3,
# the GPU's busy share, and the runtime's comparison with the lock).
set -uo pipefail
D=training_scripts/device_run; S=$HOME/ta-device-stage
# the hold's shared settings: the 2026-12-04 run's tasks, shape and LoRA (docs/training.md's table)
COMMON=(sandbox.backend=bwrap "sandbox.env.sandbox.bwrap.images_dir=$S/export" "model.path=$S/warm/merged"
        data.only_exported=true data.seed=0 trainer.val_before_train=false trainer.test_freq=-1 trainer.save_freq=-1
        "trainer.output_dir=$S/runs" model.lora_rank=16 model.lora_alpha=32 algorithm.lr=1.0e-4
        actor_rollout_ref.model.lora.merge=true 'actor_rollout_ref.model.target_modules=[q_proj,k_proj,v_proj,o_proj]'
        algorithm.reject_zero_variance_groups=false)
export TA_PROFILE_AFTER_STEP=${TA_PROFILE_AFTER_STEP:-3} TA_PROFILE_S=${TA_PROFILE_S:-30}
case "${1:-}" in
  fast)
    # what the staging calls left (TA_HOLD_STAGE: the files this call carries; by default the bundle's last part)
    bash $D/device.sh stage ${TA_HOLD_STAGE:-.device_carry/bundle/part4 .device_carry/bundle/bundle.json}
    bash $D/device.sh setup > "$OUT/setup.log" 2>&1 || { tail -30 "$OUT/setup.log"; exit 1; }
    bash $D/device.sh runtime > "$OUT/runtime.log" 2>&1; tail -n 12 "$OUT/runtime.log"
    if [ -z "${TA_SKIP_BENCH:-}" ]; then  # TA_SKIP_BENCH=1: a 'bench' call of this hold ran them already
      ( eval "$(bash $D/device.sh env)"; export PYTHONPATH="$S/rt:$PYTHONPATH" TERMINAL_AGENT_TEST_MODEL_DIR="$S/model/bf16"
        timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/training/test_packed_attention.py
        timeout 120 python3 benchmarks/bench_verl_logprobs.py --device cuda --dtype bfloat16 --tokens 16384 \
          --json "$OUT/bench_verl_logprobs_cuda.json" ) > "$OUT/gpu_tests.log" 2>&1; tail -n 8 "$OUT/gpu_tests.log"
    fi
    if [ "${TA_POLICY:-warm}" = base ]; then  # TA_POLICY=base: no warm start, GRPO from the converted base model
      COMMON+=("model.path=$S/model/bf16")    # (3 device minutes fewer; the policy differs from the 2026-12-04 table's)
    else
      TA_TRAIN_TIMEOUT=220 bash $D/device.sh warmstart "$OUT" "$S/warm" sandbox.backend=bwrap "model.path=$S/model/bf16" \
        rollout.n=8 batch.train_batch_size=8 batch.ppo_mini_batch_size=8 agent.parallel_episodes=64 agent.max_turns=4 \
        lengths.max_response_length_per_turn=256 algorithm.lr=1.0e-4 local.sft_warm_start.enabled=true \
        local.sft_warm_start.epochs=8 local.sft_warm_start.lr=1.0e-3 'trainer.loggers=[console]' > "$OUT/warm.log" 2>&1
      tail -n 3 "$OUT/warm.log"
    fi
    TA_WAIT_S=$((570 - SECONDS)) bash $D/device.sh verl "$OUT/a" "$S/runs/verl_1gpu" verl_1gpu "${COMMON[@]}" \
      trainer.total_training_steps=21 trainer.experiment=verl_1gpu "${@:2}" | tail -n 25
    ;;
  bench)
    # the runtime alone (its staging calls done, TA_HOLD_STAGE carrying its last part), then verl's two log-prob paths
    # on CUDA (benchmarks/bench_verl_logprobs.py) at 2,048 and 16,384 packed tokens
    bash $D/device.sh stage ${TA_HOLD_STAGE:-}
    bash $D/device.sh runtime > "$OUT/runtime.log" 2>&1; tail -n 4 "$OUT/runtime.log"
    ( eval "$(bash $D/device.sh env)"; export PYTHONPATH="$S/rt:$PYTHONPATH"
      for tokens in 2048 16384; do
        timeout 150 python3 benchmarks/bench_verl_logprobs.py --device cuda --dtype bfloat16 --tokens $tokens \
          --json "$OUT/bench_verl_logprobs_cuda_$tokens.json"
      done ) 2>&1 | tee "$OUT/bench.log" | tail -n 14
    ;;
  bypass)
    TA_WAIT_S=${TA_FIRST_WAIT_S:-240} bash $D/device.sh wait "$OUT/a" "$S/runs/verl_1gpu" | tail -n 8
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from ray.scripts.scripts import main; sys.argv = ["ray", "stop", "--force"]; main()' "$S/rt" > /dev/null 2>&1 || true
    TA_PROFILE_AFTER_STEP= TA_WAIT_S=$((570 - SECONDS)) bash $D/device.sh verl "$OUT/c" "$S/runs/verl_1gpu_bypass" verl_1gpu \
      "${COMMON[@]}" trainer.total_training_steps=7 trainer.experiment=verl_1gpu_bypass algorithm.old_log_probs=sampler \
      "${@:2}" | tail -n 25
    ;;
  padded)
    TA_WAIT_S=${TA_FIRST_WAIT_S:-240} bash $D/device.sh wait "$OUT/a" "$S/runs/verl_1gpu" | tail -n 8
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from ray.scripts.scripts import main; sys.argv = ["ray", "stop", "--force"]; main()' "$S/rt" > /dev/null 2>&1 || true
    TA_WAIT_S=$((570 - SECONDS)) bash $D/device.sh verl "$OUT/b" "$S/runs/verl_1gpu_padded" verl_1gpu "${COMMON[@]}" \
      model.use_remove_padding=false model.attn_implementation=sdpa batch.max_tokens_per_gpu=null model.fused_kernels=off \
      trainer.total_training_steps=6 trainer.experiment=verl_1gpu_padded | tail -n 25
    ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
