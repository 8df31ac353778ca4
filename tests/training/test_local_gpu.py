"""The model side of ``local_1gpu`` on a CUDA GPU: the preset's policy (bf16, LoRA) samples a group
through the batched sampler and takes one GRPO update there. Marked ``gpu`` (skipped in CI).

The GPU machine has no Docker, so the group's turns are sampled from fixed chats instead of
episodes; everything after the sampler (rows, masks, loss, step) is the trainer's own code.
``LOCAL_GPU_MODEL_DIR`` points at the model directory to use; without it the embedded model's
cached directory is used (on a machine that lacks the weights, a directory holding only its
config and tokenizer gets randomly initialised weights of the same architecture).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu


def _model_dir(tmp_path: Path) -> Path:
    from terminal_agent.models.embedded import cached_model_dir

    source = Path(os.environ.get("LOCAL_GPU_MODEL_DIR") or cached_model_dir())
    if any(source.glob("*.safetensors")):
        return source
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(source))
    model.save_pretrained(tmp_path / "model")
    AutoTokenizer.from_pretrained(source).save_pretrained(tmp_path / "model")
    return tmp_path / "model"


def test_local_1gpu_samples_and_updates_on_cuda(tmp_path):
    import torch

    from terminal_agent.outcome import EpisodeOutcome, Termination, TurnTokens
    from terminal_agent.training.algorithms import select_groups
    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.local.policy import load_policy, make_policy_client
    from terminal_agent.training.local.update import build_rows, forward_response_logprobs, grpo_update, pack_rows
    from terminal_agent.training.preset_config import load_preset

    config = LocalTrainingConfig.from_preset(load_preset("local_1gpu"), model_path=str(_model_dir(tmp_path)))
    assert config.device == "cuda" and config.dtype == "bfloat16"
    policy = load_policy(config)
    assert policy.device.type == "cuda"
    client = make_policy_client(policy, config)
    chat = [{"role": "system", "content": "You are a terminal agent. Reply with one <bash> action."},
            {"role": "user", "content": "Count the lines of /app/data.txt and write the number to /app/out.txt."}]
    n = config.group_size * config.tasks_per_step
    replies: list = [None] * n

    def ask(i: int) -> None:
        replies[i] = client.complete(chat, temperature=config.temperature, max_tokens=128, seed=i)

    started = time.monotonic()
    threads = [threading.Thread(target=ask, args=(i,)) for i in range(n)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    sample_s = time.monotonic() - started
    sampled = sum(len(r.completion_ids) for r in replies)
    outcomes = [
        EpisodeOutcome(task_id=f"t{i // config.group_size}", termination=Termination.FINISHED, scored=True,
                       reward=float(i % 3 == 0),
                       turn_tokens=[TurnTokens(r.prompt_ids, r.completion_ids, r.logprobs, r.finish_reason)])
        for i, r in enumerate(replies)
    ]
    groups = [outcomes[g * config.group_size:(g + 1) * config.group_size] for g in range(config.tasks_per_step)]
    rows, _ = build_rows(groups, select_groups(groups, reject_zero_variance=True))
    assert rows
    policy.model.eval()
    with torch.no_grad():
        worst = 0.0
        for row in rows:
            packed = pack_rows([row], pad_id=policy.pad_id, device=policy.device)
            lp, _ = forward_response_logprobs(policy.model, packed, config.temperature)
            mask = packed.response_mask[0].bool()
            worst = max(worst, float((lp[0][mask].float().cpu() - torch.tensor(row.old_logprobs)[mask.cpu()]).abs().max()))
    before = {k: v.clone() for k, v in policy.adapter_state().items()}
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=config.lr)
    torch.cuda.synchronize()
    stats = grpo_update(policy.model, optimizer, rows, config.actor_loss_config(), temperature=config.temperature,
                        grad_clip=config.grad_clip, pad_id=policy.pad_id,
                        micro_batch_tokens=config.micro_batch_tokens)
    torch.cuda.synchronize()
    after = policy.adapter_state()
    assert stats.stepped and any(not torch.equal(before[k], after[k]) for k in before if "lora_B" in k)
    trained = sum(r.length for r in rows)
    print(f"\nGPU local_1gpu: sampled {sampled} tokens in {sample_s:.2f} s ({sampled / sample_s:.0f} tok/s, {n} rows); "
          f"update {trained} tokens ({stats.tokens} trained) in {stats.update_s:.2f} s ({trained / stats.update_s:.0f} tok/s); "
          f"bf16 sampler/trainer logprob gap max {worst:.3f}")
    assert worst < 0.5  # bf16: the two passes round differently; a wrong alignment would be far off
