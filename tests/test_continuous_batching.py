"""The continuous-batching sampler on the real embedded model (CPU): same replies, ids and logprobs as
the one-at-a-time client, calls joining a running batch, prefix reuse, device-side sampling."""

from __future__ import annotations

import threading
import time

import pytest

from terminal_agent.models.continuous_batching import ContinuousBatchingClient, ContinuousBatchingConfig

SYSTEM = ("You are an agent in a Linux terminal. Reply with exactly one action, for example <bash>\ncmd: ls -la\n"
          "</bash>. When the task is done reply <finish>. Files live in /app; check your work.")


def _chat(i: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Create /app/f{i}.txt with hello {i}."}]


def _concurrently(fn, n: int) -> list:
    results: list = [None] * n

    def run(i: int) -> None:
        results[i] = fn(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.fixture(scope="module")
def embedded():
    from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig

    return EmbeddedModelClient(EmbeddedModelConfig(max_new_tokens=24))


def _client(embedded, **overrides) -> ContinuousBatchingClient:
    config = ContinuousBatchingConfig(**{"max_new_tokens": 24, "stop_after_action": False, **overrides})
    return ContinuousBatchingClient(embedded.model, embedded.tokenizer, config)


@pytest.mark.model
def test_greedy_ids_equal_one_at_a_time_and_logprobs_match_the_trainer(embedded):
    import torch

    from terminal_agent.models.token_logprobs import compute_batch_token_logprobs

    client = _client(embedded)
    try:
        batched = _concurrently(lambda i: client.complete(_chat(i), max_tokens=16), 3)
    finally:
        client.close()
    for i, reply in enumerate(batched):
        alone = embedded.complete(_chat(i), max_tokens=16)
        assert reply.completion_ids == alone.completion_ids
        assert reply.text == alone.text and reply.prompt_ids == alone.prompt_ids
        with torch.no_grad():
            trainer = compute_batch_token_logprobs(embedded.model, [(reply.prompt_ids, reply.completion_ids)], 1.0)[0]
        # float32: the sampler's and the trainer's forward agree to rounding
        assert float((trainer - torch.tensor(reply.logprobs)).abs().max()) < 1e-4
    assert client.stats.largest_batch == 3 and client.stats.requests == 3


@pytest.mark.model
def test_bf16_logprobs_agree_with_the_trainer_within_the_stated_tolerance(embedded):
    import copy

    import torch

    from terminal_agent.models.token_logprobs import compute_batch_token_logprobs

    model = copy.deepcopy(embedded.model).to(torch.bfloat16)
    client = ContinuousBatchingClient(model, embedded.tokenizer, ContinuousBatchingConfig(max_new_tokens=16, stop_after_action=False))
    try:
        replies = _concurrently(lambda i: client.complete(_chat(i), temperature=1.0, seed=i), 4)
    finally:
        client.close()
    with torch.no_grad():
        trainer = compute_batch_token_logprobs(model, [(r.prompt_ids, r.completion_ids) for r in replies], 1.0)
    diffs = torch.cat([(t.float() - torch.tensor(r.logprobs)).abs() for t, r in zip(trainer, replies)])
    # bf16 on CPU: different kernels round differently. HF generate's own logprobs differ from this
    # forward by mean 0.037, max 0.17 here; the documented tolerance is mean < 0.06, max < 0.3
    # (on the H200 the gap measured mean 0.005, max 0.027)
    assert float(diffs.mean()) < 0.06 and float(diffs.max()) < 0.3


@pytest.mark.model
def test_a_call_joins_the_running_batch_and_a_short_row_leaves_at_once(embedded):
    client = _client(embedded, max_new_tokens=64)
    finished: dict[str, float] = {}
    try:
        def long_call() -> None:
            client.complete(_chat(1), max_tokens=64)
            finished["long"] = time.monotonic()

        thread = threading.Thread(target=long_call)
        thread.start()
        deadline = time.monotonic() + 120
        while client.stats.decode_steps < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        steps_before = client.stats.decode_steps
        short = client.complete(_chat(2), max_tokens=4)
        finished["short"] = time.monotonic()
        thread.join()
    finally:
        client.close()
    assert len(short.completion_ids) == 4 and short.finish_reason == "length"
    assert finished["short"] < finished["long"]  # answered while the long row kept decoding
    assert client.stats.largest_batch == 2  # it decoded in the same steps as the running row
    assert client.stats.decode_steps < steps_before + 64


@pytest.mark.model
def test_next_turn_reuses_the_previous_turns_keys_and_values(embedded):
    def episode(client: ContinuousBatchingClient, i: int) -> list:
        chat, replies = _chat(i), []
        for turn in range(3):
            reply = client.complete(chat, max_tokens=8)
            replies.append(reply.completion_ids)
            chat = chat + [{"role": "assistant", "content": reply.text},
                           {"role": "user", "content": f"Observation: exit code 0 (turn {turn})."}]
        return replies

    reusing, plain = _client(embedded), _client(embedded, prefix_cache_slots=0, min_prefix_reuse=10_000)
    try:
        with_reuse = _concurrently(lambda i: episode(reusing, i), 2)
        without = _concurrently(lambda i: episode(plain, i), 2)
    finally:
        reusing.close()
        plain.close()
    assert with_reuse == without
    assert plain.stats.reused_prefix_tokens == 0
    assert reusing.stats.reused_prefix_tokens > reusing.stats.prefill_tokens  # most of each prompt was copied
    assert reusing.stats.prefill_tokens < plain.stats.prefill_tokens / 2


@pytest.mark.model
def test_seeded_rows_do_not_depend_on_their_batch_and_stops_cut_on_token_boundaries(embedded):
    client = ContinuousBatchingClient(embedded.model, embedded.tokenizer, ContinuousBatchingConfig(max_new_tokens=24))
    try:
        together = _concurrently(lambda i: client.complete(_chat(i % 2), temperature=1.0, seed=100 + i), 4)
        alone = client.complete(_chat(1), temperature=1.0, seed=101)
        stopped = client.complete(_chat(0), stop=[" "], max_tokens=24)
    finally:
        client.close()
    assert alone.completion_ids == together[1].completion_ids
    assert together[0].completion_ids != together[2].completion_ids or together[0].text == together[2].text
    decode = embedded.tokenizer.decode
    for reply in [*together, alone, stopped]:
        assert decode(reply.completion_ids, skip_special_tokens=True) == reply.text
        assert len(reply.logprobs) == len(reply.completion_ids)
    assert " " not in stopped.text


@pytest.mark.model
def test_a_prompt_longer_than_a_slot_is_a_context_error(embedded):
    from terminal_agent.models.base import ContextWindowExceededError

    client = _client(embedded, max_sequence_length=64)
    try:
        with pytest.raises(ContextWindowExceededError, match="64-token slots"):
            client.complete([{"role": "user", "content": "word " * 200}])
        short = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi."}]
        reply = client.complete(short, max_tokens=200)  # capped to what the slot still holds
        assert len(reply.prompt_ids) + len(reply.completion_ids) <= 64
    finally:
        client.close()


def test_gumbel_sampling_draws_from_the_softmax_and_top_p_cuts_the_tail():
    import torch

    from terminal_agent.models.device_sampling import choose_tokens

    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0, -3.0]])
    probs = torch.softmax(logits, -1)[0]
    draws = 20_000
    rows = logits.expand(draws, -1)
    ones = torch.ones(draws)
    seeds = torch.arange(draws, dtype=torch.int64)
    chosen, logprobs = choose_tokens(rows, ones, torch.zeros(draws, dtype=torch.bool), ones, seeds,
                                     torch.zeros(draws, dtype=torch.int64), nucleus=False)
    frequency = torch.bincount(chosen, minlength=5).float() / draws
    assert float((frequency - probs).abs().max()) < 0.015
    assert torch.allclose(logprobs, torch.log(probs)[chosen])
    # top_p 0.7: the two most likely tokens (mass 0.665 before the second) stay, the rest never appear
    nucleus, _ = choose_tokens(rows, ones, torch.zeros(draws, dtype=torch.bool), torch.full((draws,), 0.7), seeds,
                               torch.zeros(draws, dtype=torch.int64), nucleus=True)
    assert set(nucleus.tolist()) == {0, 1}
    greedy, _ = choose_tokens(rows[:3], ones[:3], torch.ones(3, dtype=torch.bool), ones[:3], seeds[:3],
                              torch.zeros(3, dtype=torch.int64), nucleus=False)
    assert greedy.tolist() == [0, 0, 0]


def test_an_unsupported_architecture_is_refused_by_name():
    from transformers import GPT2Config, GPT2LMHeadModel

    from terminal_agent.models.decoder_stack import DecoderStack, UnsupportedModelError

    model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=32, n_positions=32))
    with pytest.raises(UnsupportedModelError, match="'gpt2'"):
        DecoderStack(model)


@pytest.mark.model
def test_an_idle_worker_ends_and_the_next_call_starts_another(embedded):
    import gc
    import weakref

    client = _client(embedded, idle_exit_s=0.2, max_new_tokens=4)
    first = client.complete(_chat(0), max_tokens=4)
    worker = client._worker
    deadline = time.monotonic() + 30
    while worker is not None and worker.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker is not None and not worker.is_alive()
    assert client.complete(_chat(0), max_tokens=4).completion_ids == first.completion_ids
    # once idle, nothing but the caller holds the client: it is collected with its cache
    time.sleep(0.6)
    ref = weakref.ref(client)
    del client
    gc.collect()
    assert ref() is None


@pytest.mark.model
def test_a_reused_prefix_and_a_fresh_prompt_prefilled_together_stay_inside_the_slots(embedded):
    # one row starts late in its slot (a reused prefix), the other is long and fresh: padded to one
    # width, the first row's padding would run past a small cache unless it grows first
    long_fresh = [{"role": "system", "content": "Answer in French."}, {"role": "user", "content": "mot " * 100}]
    first_turn = _chat(5)
    # a long gather window puts both calls into one admission (one prefill pass)
    settings = {"initial_capacity": 16, "max_new_tokens": 8, "gather_window_s": 1.0, "max_gather_s": 1.0}
    client, plain = _client(embedded, **settings), _client(embedded, **settings, prefix_cache_slots=0, min_prefix_reuse=10_000)
    try:
        replies = {}
        for name, sampler in (("reuse", client), ("plain", plain)):
            opening = sampler.complete(first_turn, max_tokens=8)
            time.sleep(0.5)  # the worker falls idle, so the next two calls are gathered into one admission
            follow_up = first_turn + [{"role": "assistant", "content": opening.text}, {"role": "user", "content": "ok"}]
            replies[name] = [r.completion_ids for r in _concurrently(
                lambda i: sampler.complete([follow_up, long_fresh][i], max_tokens=8), 2)]
    finally:
        client.close()
        plain.close()
    assert client.stats.reused_prefix_tokens > 0
    assert client.stats.prefills == 2  # the opening, then the pair together
    assert replies["reuse"] == replies["plain"]
