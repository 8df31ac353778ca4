"""`terminal-agent train export` on verl FSDP checkpoints: shards joined, LoRA fused, same logits as the trained model.

The checkpoints are written the way verl's FSDP checkpoint manager writes them: each rank of a real
``torch.distributed`` group (gloo, CPU) shards a peft LoRA model with FSDP2's ``fully_shard`` and saves its
``model.state_dict()`` as ``model_world_size_W_rank_R.pt``; rank 0 writes ``fsdp_config.json``,
``huggingface/`` and ``lora_train_meta.json``.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")
transformers = pytest.importorskip("transformers")

from typer.testing import CliRunner  # noqa: E402

from terminal_agent.errors import ConfigError  # noqa: E402
from terminal_agent.training.verl.checkpoint_export import export_verl_checkpoint, is_verl_checkpoint  # noqa: E402

RANK, ALPHA = 4, 8


def _tiny_model(lora: bool):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, tie_word_embeddings=False)
    model = LlamaForCausalLM(config)
    if lora:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=RANK, lora_alpha=ALPHA, target_modules="all-linear"))
        for name, parameter in model.named_parameters():
            if "lora_B" in name:  # peft starts B at 0: a trained adapter is not
                parameter.data.normal_(0, 0.5)
    return model


def _save_rank(rank: int, world: int, port: int, out: str, lora: bool) -> None:
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        model = _tiny_model(lora)
        inner = model.base_model.model if lora else model
        for layer in inner.model.layers:
            fully_shard(layer)
        fully_shard(model)
        actor = Path(out)
        torch.save(model.state_dict(), actor / f"model_world_size_{world}_rank_{rank}.pt")
        if rank == 0:
            (actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": world}))
            inner.config.save_pretrained(actor / "huggingface")
            if lora:
                (actor / "lora_train_meta.json").write_text(json.dumps({"r": RANK, "lora_alpha": ALPHA,
                                                                        "task_type": "CAUSAL_LM"}))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_checkpoint(root: Path, world: int, lora: bool) -> Path:
    import torch.multiprocessing as mp

    actor = root / "global_step_3" / "actor"
    actor.mkdir(parents=True)
    (root / "latest_checkpointed_iteration.txt").write_text("3")
    mp.start_processes(_save_rank, args=(world, _free_port(), str(actor), lora), nprocs=world, start_method="spawn")
    return actor


def _logits(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """One LoRA run of 2 ranks and one full fine-tune of 1 rank (spawning process groups is the slow part)."""
    root = tmp_path_factory.mktemp("verl_checkpoints")
    return {"lora2": _write_checkpoint(root / "lora2", 2, lora=True), "full1": _write_checkpoint(root / "full1", 1, lora=False)}


def _copy(actor: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "ckpt"
    shutil.copytree(actor.parents[1], target)
    return target / actor.parent.name / "actor"


def test_lora_checkpoint_exports_the_trained_policy(tmp_path, checkpoints):
    actor = checkpoints["lora2"]
    assert is_verl_checkpoint(actor.parents[1]) and is_verl_checkpoint(actor)
    result = export_verl_checkpoint(actor.parents[1], tmp_path / "out", dtype="float32")
    assert result.world_size == 2
    assert result.lora_layers_fused == 2 * 7  # q, k, v, o, gate, up, down in each of 2 layers
    exported = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "out")
    ids = torch.tensor([[1, 5, 9, 33, 70, 2]])
    reference = _tiny_model(lora=True).merge_and_unload()
    base = _tiny_model(lora=False)
    torch.testing.assert_close(_logits(exported, ids), _logits(reference, ids), rtol=1e-4, atol=1e-4)
    assert not torch.allclose(_logits(exported, ids), _logits(base, ids), atol=1e-3)  # verl's merger would give this
    record = json.loads((tmp_path / "out" / "terminal_agent_export.json").read_text())
    assert record["lora_scaling"] == ALPHA / RANK and record["world_size"] == 2


def test_full_finetune_checkpoint_and_the_cli(tmp_path, checkpoints):
    from terminal_agent.cli import app

    actor = checkpoints["full1"]
    runner = CliRunner()
    result = runner.invoke(app, ["train", "export", str(actor.parent), "-o", str(tmp_path / "out"), "--dtype", "float32"])
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "out" / "terminal_agent_export.json").read_text())
    assert record["world_size"] == 1 and record["lora_layers_fused"] == 0 and record["lora_scaling"] is None
    exported = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "out")
    ids = torch.tensor([[3, 4, 5]])
    torch.testing.assert_close(_logits(exported, ids), _logits(_tiny_model(lora=False), ids))
    again = runner.invoke(app, ["train", "export", str(actor.parent), "-o", str(tmp_path / "out")])
    assert again.exit_code == 2 and "not empty" in again.output


def test_a_missing_rank_shard_is_named(tmp_path, checkpoints):
    actor = _copy(checkpoints["lora2"], tmp_path)
    (actor / "model_world_size_2_rank_1.pt").unlink()
    with pytest.raises(ConfigError, match=r"rank\(s\) \[1\] of 2 are missing"):
        export_verl_checkpoint(actor, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not is_verl_checkpoint(tmp_path)
