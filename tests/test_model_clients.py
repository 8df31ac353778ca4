"""Model clients: factory selection, litellm error handling, and litellm against a real local server.

The server is ``transformers serve`` on the embedded model's converted directory: a real
OpenAI-compatible endpoint, started once for the module.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError, ModelProviderError
from terminal_agent.models.factory import config_from_spec
from terminal_agent.models.litellm_client import LiteLLMConfig, LiteLLMModelClient

CHAT = [{"role": "user", "content": "Name one Linux command that lists files."}]


def test_config_from_spec_and_environment(monkeypatch):
    monkeypatch.delenv("LITELLM_MODEL", raising=False)
    assert config_from_spec(None).type == "embedded"
    assert config_from_spec("embedded").type == "embedded"
    monkeypatch.setenv("LITELLM_MODEL", "openai/some-model")
    picked = config_from_spec(None)
    assert (picked.type, picked.model) == ("litellm", "openai/some-model")
    scripted = config_from_spec("scripted:replies.json")
    assert scripted.type == "scripted" and scripted.replies_file == Path("replies.json")
    batched = config_from_spec("embedded-batched", max_tokens=16)
    assert (batched.type, batched.max_tokens) == ("embedded-batched", 16)


@pytest.mark.model
def test_embedded_batched_spec_builds_the_batched_sampler_on_the_embedded_model():
    from terminal_agent.models.batched_generation import BatchedEmbeddedClient
    from terminal_agent.models.factory import build_model_client

    client = build_model_client(config_from_spec("embedded-batched", max_tokens=8, temperature=0.7))
    assert isinstance(client, BatchedEmbeddedClient) and client.is_thread_safe
    assert (client.config.max_new_tokens, client.config.temperature) == (8, 0.7)
    reply = client.complete([{"role": "user", "content": "Say hi."}], seed=1)
    assert reply.completion_ids and len(reply.completion_ids) <= 8 and reply.finish_reason in {"stop", "length"}


def test_litellm_config_reads_environment(monkeypatch):
    monkeypatch.setenv("LITELLM_MODEL", "openai/m")
    monkeypatch.setenv("LITE_LLM_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LITE_LLM_API_KEY", "sk-secret-123")
    config = LiteLLMConfig.from_env(max_retries=0)
    assert (config.model, config.api_base, config.api_key, config.max_retries) == ("openai/m", "http://127.0.0.1:9/v1", "sk-secret-123", 0)
    assert "sk-secret-123" not in repr(config)  # the key is not printed
    monkeypatch.delenv("LITELLM_MODEL")
    with pytest.raises(ConfigError, match="LITELLM_MODEL"):
        LiteLLMConfig.from_env()


def test_model_configs_reject_impossible_values():
    from pydantic import ValidationError

    from terminal_agent.models.embedded import EmbeddedModelConfig

    for bad in ({"max_retries": -1}, {"timeout_s": 0}, {"temperature": -0.1}, {"max_tokens": 0}, {"top_p": 1.5}):
        with pytest.raises(ValidationError, match=next(iter(bad))):
            LiteLLMConfig(model="openai/m", **bad)
    for bad in ({"max_new_tokens": 0}, {"temperature": -1.0}, {"num_threads": 0}):
        with pytest.raises(ValidationError, match=next(iter(bad))):
            EmbeddedModelConfig(**bad)
    with pytest.raises(ValidationError, match="max_tokens"):
        config_from_spec("embedded", max_tokens=0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_endpoint_is_a_provider_error_after_retries():
    port = _free_port()  # nothing listens there
    client = LiteLLMModelClient(
        LiteLLMConfig(model="openai/x", api_base=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=2, backoff_initial_s=0.2)
    )
    started = time.monotonic()
    with pytest.raises(ModelProviderError, match="after 3 attempt"):
        client.complete(CHAT)
    assert time.monotonic() - started >= 0.2  # it backed off before retrying


@pytest.mark.model
@pytest.mark.slow
def test_litellm_against_local_server_matches_embedded_greedy(served_model):
    from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig

    model, api_base = served_model
    client = LiteLLMModelClient(LiteLLMConfig(model=model, api_base=api_base, api_key="none", max_tokens=12, max_retries=1))
    reply = client.complete(CHAT, temperature=0.0)
    assert reply.text.strip()
    assert 0 < reply.completion_tokens <= 12 and reply.prompt_tokens > 10
    embedded = EmbeddedModelClient(EmbeddedModelConfig(stop_after_action=False))
    assert reply.text == embedded.complete(CHAT, max_tokens=12).text  # same weights, same greedy decode


@pytest.mark.model
@pytest.mark.slow
def test_litellm_unknown_model_on_server_is_a_provider_error(served_model):
    _, api_base = served_model
    client = LiteLLMModelClient(
        LiteLLMConfig(model="openai/no-such-model-dir", api_base=api_base, api_key="none", max_tokens=4, max_retries=1, backoff_initial_s=0.1)
    )
    with pytest.raises(ModelProviderError):
        client.complete(CHAT)


def test_litellm_response_token_ids_and_logprobs_where_the_provider_gives_them():
    from terminal_agent.models.litellm_client import _to_model_response, import_litellm

    litellm = import_litellm()  # offline cost map

    def payload(choice_extra: dict, response_extra: dict, tokens: list[str]) -> dict:
        content = [{"token": t, "logprob": -0.5 * (i + 1), "bytes": None, "top_logprobs": []} for i, t in enumerate(tokens)]
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}, "logprobs": {"content": content}}
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{**choice, **choice_extra}], **response_extra}

    # OpenAI: logprobs, no ids
    plain = _to_model_response(litellm.ModelResponse(**payload({}, {}, ["o", "k"])), 0.1)
    assert plain.logprobs == [-0.5, -1.0] and plain.completion_ids is None and plain.prompt_ids is None
    # vLLM return_tokens_as_token_ids: ids spelled in the tokens
    spelled = _to_model_response(litellm.ModelResponse(**payload({}, {}, ["token_id:78", "token_id:74"])), 0.1)
    assert spelled.completion_ids == [78, 74] and spelled.logprobs == [-0.5, -1.0]
    # vLLM return_token_ids: ids as fields; ids and logprobs of different lengths do not go together
    listed = _to_model_response(
        litellm.ModelResponse(**payload({"token_ids": [5, 6, 7]}, {"prompt_token_ids": [1, 2]}, ["a", "b"])), 0.1
    )
    assert listed.completion_ids == [5, 6, 7] and listed.prompt_ids == [1, 2] and listed.logprobs is None
    # no logprobs at all: every token field stays None
    bare = payload({}, {}, [])
    bare["choices"][0].pop("logprobs")
    none = _to_model_response(litellm.ModelResponse(**bare), 0.1)
    assert (none.prompt_ids, none.completion_ids, none.logprobs) == (None, None, None)
