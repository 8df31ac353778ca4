"""The continuous-batching sampler's CUDA path: graphs captured per shape, recaptured when the cache
grows, the same ids as eager steps, and the policy's in-place updates seen by the next replay.
Marked ``gpu`` (skipped in CI); run on the lent H200 with ``python -m pytest -m gpu``."""

from __future__ import annotations

import os
import threading

import pytest

pytestmark = pytest.mark.gpu


def test_graphs_follow_cache_growth_and_weight_updates():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from peft import LoraConfig, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from terminal_agent.models.continuous_batching import ContinuousBatchingClient, ContinuousBatchingConfig
    from terminal_agent.models.embedded import cached_model_dir

    source = os.environ.get("LOCAL_GPU_MODEL_DIR") or cached_model_dir()  # the GPU node has no package cache
    tokenizer = AutoTokenizer.from_pretrained(source)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(source), dtype=torch.bfloat16).cuda()
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
    settings = {"max_new_tokens": 64, "stop_after_action": False, "initial_capacity": 128, "max_batch_size": 16}
    graphs = ContinuousBatchingClient(model, tokenizer, ContinuousBatchingConfig(**settings))
    eager = ContinuousBatchingClient(model, tokenizer, ContinuousBatchingConfig(**settings, cuda_graphs=False))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    capacities = []
    for round_ in range(4):
        chats = [[{"role": "user", "content": "word " * (60 * (round_ + 1)) + str(i)}] for i in range(6)]
        replies: list = [None] * 6

        def ask(i: int) -> None:
            replies[i] = graphs.complete(chats[i], max_tokens=64)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for i in range(6):
            assert replies[i].completion_ids[:16] == eager.complete(chats[i], max_tokens=64).completion_ids[:16]
        capacities.append(graphs._cache.capacity)
        model.train()  # an in-place optimizer step: the next round's replays must use it
        loss = model(input_ids=torch.tensor([replies[0].prompt_ids], device="cuda")).logits.float().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    assert capacities[-1] > capacities[0]  # the cache grew, and the graphs were captured again
    assert graphs.stats.graph_replays > 0 and graphs.stats.graph_captures >= 2
    graphs.close()
    eager.close()
