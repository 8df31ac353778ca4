"""Evaluating a trained LoRA checkpoint (`eval run --adapter`) and exporting it (`train export`).

The checkpoint is a real one: the embedded model with a LoRA adapter whose B matrices are set to
seeded random values (so it changes the greedy replies), written by the trainer's own
``save_checkpoint``. Replies are kept to a few tokens.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from terminal_agent.cli import app
from terminal_agent.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "dataset" / "latest_verified.csv"
PROMPTS = [
    [{"role": "user", "content": "List the files in the current directory."}],
    [{"role": "user", "content": "Write a shell command that counts lines in log.txt."}],
]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """(run dir, checkpoint dir, the in-memory policy that was saved)."""
    import torch

    from terminal_agent.training.local.checkpoints import TaskOrder, save_checkpoint
    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.local.policy import load_policy

    config = LocalTrainingConfig(device="cpu", num_threads=1, wandb=False)
    policy = load_policy(config)
    generator = torch.Generator().manual_seed(1)  # seed 1 changes the first reply on the eval task too
    with torch.no_grad():
        for name, parameter in policy.model.named_parameters():
            if "lora_B" in name:  # fresh LoRA is the identity (B = 0); this one changes greedy replies
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.1)
    policy.model.eval()
    run_dir = tmp_path_factory.mktemp("run")
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=1e-4)
    path = save_checkpoint(run_dir, 1, policy.model, optimizer, TaskOrder(1, 0))
    return run_dir, path, policy


def _greedy_ids(model, tokenizer, messages, max_new_tokens: int = 8) -> list[int]:  # noqa: ANN001
    import torch

    from terminal_agent.models.embedded import encode_chat

    ids = torch.tensor([encode_chat(tokenizer, messages)])
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens, do_sample=False)
    return out[0, ids.shape[1]:].tolist()


def _other_base_adapter(directory: Path) -> Path:
    """A LoRA adapter saved by peft for a (tiny, random) Llama that is not the embedded model."""
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    tiny = LlamaForCausalLM(LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                                        num_key_value_heads=1, vocab_size=128))
    adapter = get_peft_model(tiny, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    adapter.save_pretrained(str(directory))
    return directory


@pytest.mark.model
def test_adapters_that_cannot_be_used_are_config_errors_naming_the_path(checkpoint, tmp_path):
    from terminal_agent.models.embedded import ensure_embedded_model_cached
    from terminal_agent.models.adapter_loading import LocalModelConfig, check_adapter_fits, prepare_local_model, resolve_adapter_dir

    run_dir, step, _ = checkpoint
    # every spelling of a good checkpoint names the same adapter directory
    assert resolve_adapter_dir(step) == resolve_adapter_dir(step / "adapter") == resolve_adapter_dir(run_dir) == step / "adapter"
    check_adapter_fits(step / "adapter", ensure_embedded_model_cached())

    missing = tmp_path / "no-such-checkpoint"
    no_weights = tmp_path / "step_000009"
    (no_weights / "adapter").mkdir(parents=True)
    shutil.copy(step / "adapter" / "adapter_config.json", no_weights / "adapter")
    no_adapter = tmp_path / "step_000008"
    no_adapter.mkdir()
    shutil.copy(step / "trainer_state.pt", no_adapter)
    other = _other_base_adapter(tmp_path / "other-base")
    cases = {missing: "does not exist", no_weights: "no adapter weights", no_adapter: "without adapter weights",
             other: "is for another base model"}
    for path, why in cases.items():
        with pytest.raises(ConfigError, match=why) as caught:
            prepare_local_model(LocalModelConfig(model="embedded", adapter=path))
        assert str(path) in str(caught.value)

    # the CLI refuses them as usage errors (exit 2) before loading a model or starting a sandbox
    runner = CliRunner()
    for path, why in ((other, "another base model"), (no_weights, "no adapter weights")):
        result = runner.invoke(app, ["eval", "run", str(SHIPPED), "--limit", "1", "--adapter", str(path)],
                               env={"COLUMNS": "400"})  # the error names a long temporary path: keep it on one line
        assert result.exit_code == 2, result.output
        assert why in result.output and path.name in result.output
    result = runner.invoke(app, ["eval", "run", str(SHIPPED), "--limit", "1", "--model", "openai/x", "--adapter", str(step)])
    assert result.exit_code == 2 and "--adapter needs" in result.output
    result = runner.invoke(app, ["train", "export", str(other), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "another base model" in result.output and not (tmp_path / "out").exists()


@pytest.mark.model
def test_export_loads_with_from_pretrained_and_gives_the_adapters_greedy_replies(checkpoint, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    _, step, policy = checkpoint
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["train", "export", str(step), "-o", str(out)])
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert {"config.json", "model.safetensors", "generation_config.json", "tokenizer.json", "tokenizer_config.json"} <= names
    assert "chat_template.jinja" in names or "chat_template" in json.loads((out / "tokenizer_config.json").read_text())
    assert not {"adapter_config.json", "adapter_model.safetensors"} & names  # no peft left: a plain model directory
    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"] and "quantization_config" not in config

    exported = AutoModelForCausalLM.from_pretrained(out).eval()
    tokenizer = AutoTokenizer.from_pretrained(out)  # the export's own tokenizer and chat template
    assert not any("lora" in name for name, _ in exported.named_parameters())
    for messages in PROMPTS:
        with_adapter = _greedy_ids(policy.model, policy.tokenizer, messages)
        with policy.model.disable_adapter():
            base = _greedy_ids(policy.model, policy.tokenizer, messages)
        assert _greedy_ids(exported, tokenizer, messages) == with_adapter
        assert with_adapter != base, "the adapter must change the reply, or this test could not fail"

    # a non-empty output directory is kept unless --force
    result = CliRunner().invoke(app, ["train", "export", str(step), "-o", str(out)])
    assert result.exit_code == 2 and "not empty" in result.output and "--force" in result.output
    assert (out / "model.safetensors").is_file()


@pytest.mark.docker
@pytest.mark.model
def test_eval_run_with_an_adapter_and_compare_with_the_base_run(checkpoint, tmp_path):
    from terminal_agent.evaluation.results import RunResults
    from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig, ensure_embedded_model_cached
    from terminal_agent.rollout.transcripts import read_transcript
    from terminal_agent.tasks.loading import load_tasks

    _, step, policy = checkpoint
    task_id = load_tasks(SHIPPED)[0].task_id
    common = [str(SHIPPED), "--task", task_id, "--max-steps", "1", "--max-tokens", "12", "-c", "1", "--no-plot", "--device", "cpu"]
    runner = CliRunner()
    adapted, base = tmp_path / "adapter", tmp_path / "base"
    result = runner.invoke(app, ["eval", "run", *common, "--model", "embedded", "--adapter", str(step), "-o", str(adapted)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["eval", "run", *common, "--model", str(ensure_embedded_model_cached()), "-o", str(base)])
    assert result.exit_code == 0, result.output

    runs = {name: RunResults.read(path / "results.json") for name, path in (("adapter", adapted), ("base", base))}
    assert runs["adapter"].run.model == f"embedded/SmolLM2-135M-Instruct + adapter {step}"
    assert runs["base"].run.model.startswith("local/")
    first = {}
    for name, run in runs.items():
        (trial,) = run.trials
        assert trial.scored, trial.error
        first[name] = read_transcript((adapted if name == "adapter" else base) / trial.transcript)["model_calls"][0]
    # the sampler ran the checkpoint's weights: its greedy reply is the adapter's own, not the base's
    reference = EmbeddedModelClient(EmbeddedModelConfig(max_new_tokens=12), model=policy.model, tokenizer=policy.tokenizer)
    expected = reference.complete(first["adapter"]["messages"], temperature=0.0, max_tokens=12)
    assert first["adapter"]["response"]["completion_ids"] == expected.completion_ids
    assert first["adapter"]["messages"] == first["base"]["messages"]
    assert first["adapter"]["response"]["completion_ids"] != first["base"]["response"]["completion_ids"]

    result = runner.invoke(app, ["eval", "compare", str(base), str(adapted), "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    assert "+ adapter" in result.output and "local/" in result.output and "1 common tasks" in result.output
    result = runner.invoke(app, ["eval", "compare", str(base / "results.json"), str(adapted / "results.json"),
                                 "--metric", "pass", "--n-boot", "200", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["n_tasks"] == 1
