"""`terminal-agent train export`: a training run's checkpoint (local trainer or verl) as a plain model directory."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(no_args_is_help=True)
console = Console(stderr=True)

_DTYPES: tuple[Literal["float32", "bfloat16", "float16"], ...] = ("float32", "bfloat16", "float16")


@app.command("export")
def export(
    checkpoint: Path = typer.Argument(
        ..., help="A checkpoint of the local trainer (RUN/checkpoints/step_N), its adapter/ directory, or a run directory (its latest checkpoint); or a verl checkpoint (its root, a global_step_N folder or its actor folder)."
    ),
    out_dir: Path = typer.Option(..., "--output-dir", "-o", help="Where the merged model goes (a new or empty directory)."),
    model: str = typer.Option("embedded", "--model", "-m", help="The base the adapter was trained on: 'embedded' or a transformers model directory."),
    dtype: str = typer.Option(None, "--dtype", help="Saved weights' dtype: float32, bfloat16 or float16 (default: the base's own)."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty output directory."),
) -> None:
    """Merge a checkpoint's LoRA adapter into its base model: a plain transformers model directory.

    A verl checkpoint (FSDP shards of any world size) is joined, and a LoRA run's adapter fused into the
    base weights (--model is not needed: verl stores the config beside the shards).

    The directory holds config, safetensors weights, tokenizer and chat template and generation config:
    it loads with AutoModelForCausalLM.from_pretrained and has the layout vLLM serves. Exits 2 for a bad
    checkpoint, a base it does not fit, or a non-empty output directory without --force.
    """
    from terminal_agent.errors import ConfigError
    from terminal_agent.training.local.model_export import export_merged_model
    from terminal_agent.training.verl.checkpoint_export import export_verl_checkpoint, is_verl_checkpoint

    if dtype is not None and dtype not in _DTYPES:
        console.print(f"[red]error:[/] --dtype must be float32, bfloat16 or float16, not {escape(dtype)!s}", highlight=False)
        raise typer.Exit(2)
    if is_verl_checkpoint(checkpoint):
        try:
            with console.status(f"joining the verl checkpoint {escape(str(checkpoint))} ..."):
                verl = export_verl_checkpoint(checkpoint, out_dir, dtype=dtype or "bfloat16", force=force)
        except ConfigError as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        console.print(f"exported verl checkpoint {escape(str(verl.actor_dir))} ({verl.world_size} shard(s), "
                      f"{verl.lora_layers_fused} LoRA projection(s) fused, {verl.parameters / 1e6:.1f}M parameters) "
                      f"-> {escape(str(verl.out_dir))}", highlight=False)
        return
    try:
        with console.status(f"merging {escape(str(checkpoint))} into {escape(model)} ..."):
            result = export_merged_model(checkpoint, out_dir, model=model, dtype=dtype, force=force)
    except ConfigError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    console.print(
        f"exported {escape(str(result.adapter_dir))} merged into {escape(result.base_dir.name)} "
        f"({result.parameters / 1e6:.1f}M parameters) -> {escape(str(result.out_dir))}",
        highlight=False,
    )
    console.print(f"  files: {escape(', '.join(result.files))}", highlight=False)
