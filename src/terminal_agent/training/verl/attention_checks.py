"""Which attention the FSDP actor of a verl run uses, and whether this machine can run it with padding-free rows.

A preset needs padding-free ("packed") rows when ``model.use_remove_padding`` is true or Ulysses
``parallel.sequence_parallel`` is above 1 (Ulysses splits the packed row). Then the attention must keep each row to
itself without a padding mask:

* ``flash_attention_2`` (verl's default) needs the flash-attn package, a CUDA compile;
* :data:`PACKED_ATTENTION_NAME` (:mod:`~terminal_agent.training.verl.packed_attention`) needs torch >= 2.10's varlen
  kernels and a CUDA GPU of compute capability 8.0 or newer;
* ``sdpa``, ``flex_attention`` and ``eager`` get a block-diagonal mask from transformers with SP 1, but verl's Ulysses
  patch wraps flash attention only, so with SP above 1 their rows would be split across ranks unseen.

:func:`packed_attention_report` says what a launch on this machine would refuse (a CPU machine can print it);
:func:`check_packed_attention` is the launch's check, raising :class:`TrainingSetupError` with that line. The names
live here, not in the attention module, so that the hydra mapping and the checks need neither torch nor transformers.
"""

from __future__ import annotations

import importlib
from typing import Final

from terminal_agent.errors import TrainingSetupError
from terminal_agent.training.verl.preset_sections import VerlPreset
from terminal_agent.training.verl.attention_names import PACKED_ATTENTION_MODULE, PACKED_ATTENTION_NAME

#: What verl 0.9.1 loads when ``model.attn_implementation`` is unset.
VERL_DEFAULT_ATTENTION: Final = "flash_attention_2"
#: flash attention names and the package each imports.
FLASH_ATTENTION_PACKAGES: Final = {"flash_attention_2": "flash_attn", "flash_attention_3": "flash_attn_interface"}


def chosen_attention(preset: VerlPreset) -> str:
    """The actor's ``attn_implementation``: the preset's, or verl's default."""
    return preset.model.attn_implementation or VERL_DEFAULT_ATTENTION


def needs_packed_rows(preset: VerlPreset) -> bool:
    """verl runs the actor on padding-free rows: ``use_remove_padding``, or Ulysses SP (which needs them)."""
    return preset.model.use_remove_padding or preset.parallel.sequence_parallel > 1


def _flash_attention_problem(attention: str) -> str | None:
    package = FLASH_ATTENTION_PACKAGES[attention]
    try:
        importlib.import_module(package)
    except (ImportError, OSError) as exc:  # OSError: a build whose CUDA libraries do not load
        return (f"model.attn_implementation {attention} needs the {package} package, which does not import here "
                f"({exc}): pip install flash-attn --no-build-isolation (it compiles CUDA kernels: long, and needs "
                f"nvcc), or set model.attn_implementation={PACKED_ATTENTION_NAME} (torch's own varlen kernels)")
    return None


def _project_attention_problem() -> str | None:
    try:
        from terminal_agent.training.verl.packed_attention import varlen_attention_problem
    except ImportError as exc:
        return (f"model.attn_implementation {PACKED_ATTENTION_NAME} needs torch and transformers ({exc}): "
                "pip install -e '.[model]'")
    problem = varlen_attention_problem()
    return None if problem is None else f"model.attn_implementation {PACKED_ATTENTION_NAME}: {problem}"


def packed_attention_report(preset: VerlPreset) -> str | None:
    """What a launch of ``preset`` on this machine would refuse about its attention, in one line, or None. Raises
    nothing: a CPU machine can show it beside a dry run."""
    if preset.backend != "verl" or not needs_packed_rows(preset):
        return None
    attention = chosen_attention(preset)
    if attention in FLASH_ATTENTION_PACKAGES:
        return _flash_attention_problem(attention)
    if attention == PACKED_ATTENTION_NAME:
        return _project_attention_problem()
    sp_size = preset.parallel.sequence_parallel
    if sp_size > 1:
        return (f"parallel.sequence_parallel {sp_size} with model.attn_implementation {attention}: verl's Ulysses "
                "patch covers flash attention only, so each rank would attend to its own slice of the rows; set "
                f"model.attn_implementation={PACKED_ATTENTION_NAME} (or flash_attention_2 with flash-attn installed)")
    return None


def check_packed_attention(preset: VerlPreset) -> None:
    """The launch's attention check: raises :class:`TrainingSetupError` with :func:`packed_attention_report`'s line."""
    problem = packed_attention_report(preset)
    if problem is not None:
        raise TrainingSetupError(problem)


__all__ = ["FLASH_ATTENTION_PACKAGES", "PACKED_ATTENTION_MODULE", "PACKED_ATTENTION_NAME", "VERL_DEFAULT_ATTENTION",
           "check_packed_attention", "chosen_attention", "needs_packed_rows", "packed_attention_report"]
