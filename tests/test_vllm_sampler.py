"""The vLLM sampler without vLLM: the ``local.sampler`` key and its errors, the trainer's choice of
sampler, and the client's own logic (token capture, stop rules, adapter sync, failures) driven through
a stand-in engine with vLLM's interface. The real engine is tested in ``test_vllm_sampler_gpu.py``."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from terminal_agent.errors import ConfigError, ModelProviderError
from terminal_agent.models import vllm_sampler
from terminal_agent.models.base import ContextWindowExceededError
from terminal_agent.models.vllm_sampler import VLLMSamplerClient, VLLMSamplerConfig, require_vllm, vllm_lora_rank
from terminal_agent.rollout.episode_spec import EpisodeSpec
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.preset_config import TrainingPreset, load_preset

SYSTEM = "You are an agent in a Linux terminal. Reply with exactly one action."
REPLY = "<bash>\ncmd: ls -la\n</bash>\nThen I will check it."


@pytest.fixture()
def no_vllm(monkeypatch):
    monkeypatch.setattr(vllm_sampler, "vllm_installed", lambda: False)


# --- the key and its errors ---------------------------------------------------------------
def test_require_vllm_names_the_key_and_what_to_install(no_vllm):
    with pytest.raises(ConfigError, match=r"^local\.sampler: 'vllm' samples through vLLM, which is not installed") as raised:
        require_vllm()
    assert "pip install vllm==0.24.0" in str(raised.value) and "local.sampler=auto" in str(raised.value)


def test_this_machine_has_no_vllm_and_says_so():
    if vllm_sampler.vllm_installed():
        pytest.skip("vLLM is installed here")
    with pytest.raises(ConfigError, match="pip install vllm"):
        require_vllm()


def test_sampler_key_defaults_to_auto_and_is_mapped_to_local_sampler():
    assert LocalTrainingConfig().sampler == "auto"
    assert LocalTrainingConfig.from_preset(load_preset("local_1gpu", ["local.sampler=batched"])).sampler == "batched"
    assert LocalTrainingConfig.from_preset(load_preset("local_1gpu")).sampler == "auto"
    for value in ("auto", "continuous", "batched"):
        assert LocalTrainingConfig.from_preset(load_preset("local_1gpu"), sampler=value).sampler == value


def test_an_unknown_sampler_is_refused_naming_the_values():
    with pytest.raises(ConfigError, match=r"^sampler: .*'auto', 'continuous', 'batched' or 'vllm'"):
        LocalTrainingConfig.from_preset(load_preset("local_1gpu"), sampler="sglang")


def test_selecting_vllm_where_it_is_missing_is_a_config_error(no_vllm):
    expected = r"^sampler: 'vllm' samples through vLLM, which is not installed.*pip install vllm==0\.24\.0"
    with pytest.raises(ConfigError, match=expected):
        LocalTrainingConfig.from_preset(load_preset("local_1gpu"), sampler="vllm")


def test_vllm_on_a_cpu_preset_is_refused():
    with pytest.raises(ConfigError, match=r"^sampler: vllm samples on a CUDA GPU, but local.device is cpu"):
        LocalTrainingConfig.from_preset(load_preset("local_cpu_smoke"), sampler="vllm")


def _preset_with_sampler(name: str, sampler: str) -> TrainingPreset:
    return load_preset(name, [f"local.sampler={sampler}"])


def test_a_preset_that_sets_local_sampler_is_read(no_vllm):
    assert LocalTrainingConfig.from_preset(_preset_with_sampler("local_1gpu", "batched")).sampler == "batched"
    with pytest.raises(ConfigError, match=r"^local\.sampler: 'vllm' samples through vLLM.*\(in "):
        LocalTrainingConfig.from_preset(_preset_with_sampler("local_1gpu", "vllm"))


# --- a tiny policy and the trainer's choice of sampler -------------------------------------
@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from terminal_agent.models.embedded import ensure_embedded_model_cached

    return AutoTokenizer.from_pretrained(ensure_embedded_model_cached())


def _tiny_model(tokenizer: Any, *, lora: bool = True, kind: str = "llama") -> Any:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    if kind == "gpt2":
        return GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=1, n_head=2, n_positions=256))
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32,
                                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                         max_position_embeddings=512, eos_token_id=tokenizer.eos_token_id))
    if not lora:
        return model
    from peft import LoraConfig, get_peft_model

    return get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))


@pytest.mark.model
def test_the_trainer_picks_its_sampler_by_the_key(tokenizer, no_vllm):
    import torch

    from terminal_agent.models.batched_generation import BatchedEmbeddedClient
    from terminal_agent.models.continuous_batching import ContinuousBatchingClient
    from terminal_agent.training.local.policy import LocalPolicy, make_policy_client

    policy = LocalPolicy(model=_tiny_model(tokenizer), tokenizer=tokenizer, device=torch.device("cpu"))
    settings = {"concurrency": 2, "episode": EpisodeSpec.small(max_tokens_per_turn=8)}
    for sampler, kind in (("auto", ContinuousBatchingClient), ("continuous", ContinuousBatchingClient),
                          ("batched", BatchedEmbeddedClient)):
        client = make_policy_client(policy, LocalTrainingConfig(sampler=sampler, **settings))
        assert type(client) is kind
        getattr(client, "close", lambda: None)()
    with pytest.raises(ConfigError, match=r"^local\.sampler: 'vllm' samples through vLLM.*pip install"):
        make_policy_client(policy, LocalTrainingConfig(sampler="vllm", **settings))
    unsupported = LocalPolicy(model=_tiny_model(tokenizer, lora=False, kind="gpt2"), tokenizer=tokenizer,
                              device=torch.device("cpu"))
    assert type(make_policy_client(unsupported, LocalTrainingConfig(**settings))) is BatchedEmbeddedClient  # auto falls back
    with pytest.raises(ConfigError, match=r"^local\.sampler: the continuous sampler cannot run this model"):
        make_policy_client(unsupported, LocalTrainingConfig(sampler="continuous", **settings))


@pytest.mark.model
def test_vllm_on_a_cpu_policy_is_refused(tokenizer, monkeypatch):
    import torch

    from terminal_agent.training.local.policy import LocalPolicy, make_policy_client

    monkeypatch.setattr(vllm_sampler, "vllm_installed", lambda: True)
    policy = LocalPolicy(model=_tiny_model(tokenizer), tokenizer=tokenizer, device=torch.device("cpu"))
    with pytest.raises(ConfigError, match=r"^local\.sampler: vllm samples on a CUDA GPU, but the policy is on cpu"):
        make_policy_client(policy, LocalTrainingConfig(sampler="vllm"))


def test_the_registry_entry_says_what_to_install(no_vllm):
    from terminal_agent.models import build_model_client, config_from_spec

    assert config_from_spec("vllm:/models/x").type == "vllm"
    with pytest.raises(ConfigError, match=r"^model client 'vllm': 'vllm' samples through vLLM.*pip install vllm"):
        build_model_client(config_from_spec("vllm"))


def test_lora_ranks_map_onto_the_ranks_vllm_accepts():
    assert [vllm_lora_rank(r) for r in (1, 4, 8, 9, 16, 300, 512)] == [1, 8, 8, 16, 16, 320, 512]
    with pytest.raises(ConfigError, match="above vLLM's largest"):
        vllm_lora_rank(1024)


# --- the client, on a stand-in engine with vLLM's interface --------------------------------
class FakeEngine:
    """``LLMEngine``'s methods the client calls: one token per running request per step, each with a
    logprob of ``-(position + 1) / 100``; ``script(prompt_ids, lora)`` gives a request's tokens (then a filler)."""

    def __init__(self, script, filler: int):
        self.script, self.filler = script, filler
        self.active: dict[str, dict[str, Any]] = {}
        self.added: list[dict[str, Any]] = []
        self.aborted: list[str] = []
        self.loaded: list[Any] = []
        self.removed: list[int] = []
        self.steps = 0
        self.fail_next: BaseException | None = None
        self.step_delay_s = 0.0
        self.engine_core = SimpleNamespace(shutdown=self._shutdown, down=False)

    def _shutdown(self) -> None:
        self.engine_core.down = True

    def add_request(self, request_id, prompt, params, lora_request=None):
        ids = prompt["prompt_token_ids"]
        record = {"id": request_id, "prompt": ids, "params": params, "lora": lora_request,
                  "tokens": list(self.script(ids, lora_request)), "sent": 0}
        self.added.append(record)
        self.active[request_id] = record

    def has_unfinished_requests(self) -> bool:
        return bool(self.active)

    def abort_request(self, request_ids):
        self.aborted.extend(request_ids)
        for request_id in request_ids:
            self.active.pop(request_id, None)

    def add_lora(self, lora) -> bool:
        assert (Path(lora.lora_path) / "adapter_config.json").is_file()
        self.loaded.append(lora)
        return True

    def remove_lora(self, lora_id: int) -> bool:
        self.removed.append(lora_id)
        return True

    def step(self):
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error
        time.sleep(self.step_delay_s)
        self.steps += 1
        outputs = []
        for request_id, record in list(self.active.items()):
            position = record["sent"]
            token = record["tokens"][position] if position < len(record["tokens"]) else self.filler
            record["sent"] += 1
            params = record["params"]
            finish = None
            if not params.ignore_eos and token in params.stop_token_ids:
                finish = "stop"
            elif record["sent"] >= params.max_tokens:
                finish = "length"
            if finish:
                del self.active[request_id]
            logprob = {token: SimpleNamespace(logprob=-(position + 1) / 100)}
            completion = SimpleNamespace(token_ids=[token], logprobs=[logprob], finish_reason=finish)
            outputs.append(SimpleNamespace(request_id=request_id, outputs=[completion], finished=finish is not None))
        return outputs


class FakeLLM:
    built: list[dict[str, Any]] = []

    def __init__(self, engine: FakeEngine, **kwargs):
        FakeLLM.built.append(kwargs)
        self.kwargs = kwargs
        self.llm_engine = engine
        self.model_config = SimpleNamespace(max_model_len=kwargs.get("max_model_len") or 512)


def _api(engine: FakeEngine) -> SimpleNamespace:
    return SimpleNamespace(
        LLM=lambda **kwargs: FakeLLM(engine, **kwargs),
        SamplingParams=lambda **kwargs: SimpleNamespace(**kwargs),
        LoRARequest=lambda name, number, path: SimpleNamespace(lora_name=name, lora_int_id=number, lora_path=path),
        RequestOutputKind=SimpleNamespace(DELTA="delta"),
    )


def _chat(i: int = 0) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Create /app/f{i}.txt."}]


def _client(tokenizer, model, engine: FakeEngine, tmp_path: Path, **settings) -> VLLMSamplerClient:
    config = VLLMSamplerConfig(**{"max_new_tokens": 24, "temperature": 1.0, "adapter_dir": tmp_path, **settings})
    return VLLMSamplerClient(model, tokenizer, tmp_path / "model", config, vllm_api=_api(engine))


def _reply_tokens(tokenizer, text: str = REPLY) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


@pytest.mark.model
def test_replies_carry_prompt_ids_cut_completion_ids_logprobs_and_finish_reason(tokenizer, tmp_path):
    from terminal_agent.models.embedded import encode_chat

    reply = _reply_tokens(tokenizer)
    engine = FakeEngine(lambda ids, lora: reply, filler=reply[-1])
    client = _client(tokenizer, _tiny_model(tokenizer), engine, tmp_path)
    try:
        answer = client.complete(_chat(), seed=7)
        assert answer.prompt_ids == encode_chat(tokenizer, _chat())
        assert answer.text == "<bash>\ncmd: ls -la\n</bash>"  # the closed action tag ends the reply
        assert tokenizer.decode(answer.completion_ids, skip_special_tokens=True) == answer.text
        assert answer.completion_ids == reply[: len(answer.completion_ids)]
        assert answer.logprobs == [-(i + 1) / 100 for i in range(len(answer.completion_ids))]
        assert answer.finish_reason == "stop" and answer.completion_tokens == len(answer.completion_ids)
        assert engine.aborted == ["0"] and client.stats.stopped_by_rule == 1  # the engine stops that row too
        params = engine.added[0]["params"]
        assert (params.temperature, params.top_p, params.seed, params.logprobs, params.detokenize) == (1.0, 1.0, None, 0, False)
        assert params.output_kind == "delta" and params.max_tokens == 24 and not params.ignore_eos
        assert set(params.stop_token_ids) >= {tokenizer.eos_token_id}
        greedy = client.complete(_chat(), temperature=0, seed=3, stop=["ls"], max_tokens=12)
        assert greedy.text == "<bash>\ncmd:" and engine.added[1]["params"].temperature == 0.0
        assert engine.added[1]["params"].seed is None and engine.added[1]["params"].max_tokens == 12
        assert client.stats.requests == 2 and client.stats.generated_tokens >= len(answer.completion_ids)
    finally:
        client.close()
    client = _client(tokenizer, _tiny_model(tokenizer), engine, tmp_path, call_seeds=True)
    try:
        client.complete(_chat(), seed=7)
        assert engine.added[-1]["params"].seed == 7  # call_seeds: the call's seed reaches its row
    finally:
        client.close()


@pytest.mark.model
def test_eos_and_the_token_cap_end_rows_inside_the_engine(tokenizer, tmp_path):
    words = _reply_tokens(tokenizer, " just some words and more words")
    eos = tokenizer.eos_token_id
    engine = FakeEngine(lambda ids, lora: words[:3] + [eos], filler=words[0])
    client = _client(tokenizer, _tiny_model(tokenizer), engine, tmp_path, stop_after_action=False)
    try:
        ended = client.complete(_chat())
        assert ended.completion_ids == words[:3] + [eos] and ended.finish_reason == "stop"
        assert tokenizer.eos_token not in ended.text and len(ended.logprobs) == 4
        capped = client.complete(_chat(), max_tokens=2)
        assert capped.completion_ids == words[:2] and capped.finish_reason == "length"
        assert engine.aborted == []
    finally:
        client.close()
    engine = FakeEngine(lambda ids, lora: words[:3] + [eos], filler=words[0])
    client = _client(tokenizer, _tiny_model(tokenizer), engine, tmp_path, stop_after_action=False, ignore_eos=True)
    try:
        full = client.complete(_chat(), max_tokens=6)  # benchmarks: equal lengths past EOS
        assert len(full.completion_ids) == 6 and full.finish_reason == "length"
        assert engine.added[0]["params"].ignore_eos and engine.added[0]["params"].stop_token_ids == []
    finally:
        client.close()


@pytest.mark.model
def test_engine_settings_share_the_gpu_and_fit_the_adapter(tokenizer, tmp_path):
    FakeLLM.built.clear()
    engine = FakeEngine(lambda ids, lora: [1], filler=1)
    _client(tokenizer, _tiny_model(tokenizer), engine, tmp_path, max_batch_size=8).close()
    settings = FakeLLM.built[-1]
    assert settings["gpu_memory_utilization"] == 0.3 and settings["enforce_eager"] is False
    assert settings["enable_lora"] is True and settings["max_lora_rank"] == 8 and settings["max_loras"] == 1
    assert settings["logprobs_mode"] == "processed_logprobs" and settings["skip_tokenizer_init"] is True
    assert settings["max_num_seqs"] == 8 and settings["dtype"] == "float32" and settings["model"] == str(tmp_path / "model")
    assert engine.engine_core.down  # close stops the engine
    _client(tokenizer, _tiny_model(tokenizer, lora=False), FakeEngine(lambda ids, lora: [1], filler=1), tmp_path).close()
    assert "enable_lora" not in FakeLLM.built[-1]  # a plain model: the directory's weights, no adapter


@pytest.mark.model
def test_concurrent_calls_share_engine_steps(tokenizer, tmp_path):
    words = _reply_tokens(tokenizer, " a b c d e f g h i j k l m n o p")
    engine = FakeEngine(lambda ids, lora: words, filler=words[0])
    engine.step_delay_s = 0.002
    client = _client(tokenizer, _tiny_model(tokenizer), engine, tmp_path, stop_after_action=False)
    replies: list[Any] = [None] * 6

    def ask(i: int) -> None:
        replies[i] = client.complete(_chat(i), max_tokens=10 + i)

    try:
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
        [t.start() for t in threads]
        [t.join() for t in threads]
    finally:
        client.close()
    assert [len(r.completion_ids) for r in replies] == [10 + i for i in range(6)]
    assert client.stats.requests == 6 and client.stats.largest_batch > 1
    assert client.stats.decode_steps < sum(10 + i for i in range(6))  # rows decoded together
    assert client.stats.busy_s > 0 and client.stats.row_steps == client.stats.generated_tokens


@pytest.mark.model
def test_the_adapter_is_carried_over_after_each_update_and_only_then(tokenizer, tmp_path):
    import torch

    engine = FakeEngine(lambda ids, lora: [1], filler=1)
    model = _tiny_model(tokenizer)
    client = _client(tokenizer, model, engine, tmp_path, stop_after_action=False, max_new_tokens=1)
    try:
        client.complete(_chat())
        client.complete(_chat())
        assert [lora.lora_int_id for lora in engine.loaded] == [1]  # unchanged weights: loaded once
        assert [r["lora"].lora_int_id for r in engine.added] == [1, 1]
        first_dir = Path(engine.loaded[0].lora_path)
        with torch.no_grad():  # what an optimizer step does: in place
            for name, parameter in model.named_parameters():
                if "lora_B" in name:
                    parameter.add_(0.5)
        client.complete(_chat())
        assert [lora.lora_int_id for lora in engine.loaded] == [1, 2] and engine.removed == [1]
        assert engine.added[-1]["lora"].lora_int_id == 2 and not first_dir.exists()
        from safetensors.torch import load_file

        saved = load_file(str(Path(engine.loaded[1].lora_path) / "adapter_model.safetensors"))
        assert saved and all(float(t.float().mean()) == pytest.approx(0.5) for k, t in saved.items() if "lora_B" in k)
        with model.disable_adapter():
            client.complete(_chat())
        assert engine.added[-1]["lora"] is None  # the base model, while the adapter is disabled
        client.complete(_chat())
        assert engine.added[-1]["lora"].lora_int_id == 2 and len(engine.loaded) == 2
        assert client.stats.adapter_syncs == 2
    finally:
        client.close()
    assert not any(tmp_path.glob("vllm-adapters-*"))  # close removes the saved adapters


@pytest.mark.model
def test_full_fine_tuning_is_refused(tokenizer, tmp_path):
    import torch

    FakeLLM.built.clear()
    model = _tiny_model(tokenizer)
    model.base_model.model.lm_head.weight.requires_grad_(True)
    with pytest.raises(ConfigError, match=r"carries only LoRA adapters.*lm_head.*local.sampler=auto"):
        _client(tokenizer, model, FakeEngine(lambda ids, lora: [1], filler=1), tmp_path)
    assert FakeLLM.built == []  # refused before vLLM starts
    plain = _tiny_model(tokenizer, lora=False)
    client = _client(tokenizer, plain, FakeEngine(lambda ids, lora: [1], filler=1), tmp_path, max_new_tokens=1)
    try:
        client.complete(_chat())
        with torch.no_grad():
            plain.lm_head.weight.add_(1.0)
        with pytest.raises(ModelProviderError, match="base weights changed"):
            client.complete(_chat())
    finally:
        client.close()


@pytest.mark.model
def test_failures_reach_the_callers_and_a_dead_engine_stays_dead(tokenizer, tmp_path):
    engine = FakeEngine(lambda ids, lora: [1], filler=1)
    client = _client(tokenizer, _tiny_model(tokenizer), engine, tmp_path, max_new_tokens=2, stop_after_action=False)
    try:
        engine.fail_next = RuntimeError("CUDA error: an illegal memory access")
        with pytest.raises(ModelProviderError, match="vLLM sampling failed: RuntimeError: CUDA error"):
            client.complete(_chat())
        assert len(client.complete(_chat()).completion_ids) == 2  # a failed step does not end the client

        class EngineDeadError(Exception):
            pass

        engine.fail_next = EngineDeadError("engine core died")
        with pytest.raises(ModelProviderError, match="engine core died"):
            client.complete(_chat())
        with pytest.raises(ModelProviderError, match="engine core died"):
            client.complete(_chat())
        with pytest.raises(ContextWindowExceededError):
            client.complete([{"role": "user", "content": "word " * 600}])
    finally:
        client.close()
    with pytest.raises(ModelProviderError, match="closed"):
        client.complete(_chat())
