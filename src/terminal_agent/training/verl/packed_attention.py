"""Padding-free ("packed") rows for verl's FSDP actor without flash-attn: one attention function for transformers.

verl's padding-free forward (``use_remove_padding``, which Ulysses sequence parallelism needs) calls the model with
every row of a micro batch laid end to end in one row: ``input_ids`` (1, total_tokens), ``attention_mask=None``,
``position_ids`` restarting at 0 for each row. The attention must keep each row to itself. flash-attn does, but it is
a CUDA compile; torch >= 2.10 ships the same FlashAttention-2 varlen kernels as
``torch.nn.attention.varlen.varlen_attn``, which is what this module calls.

Importing the module registers :data:`PACKED_ATTENTION_NAME` with transformers' ``AttentionInterface`` (the function
below) and ``AttentionMaskInterface`` (no mask for packed rows; transformers' sdpa mask for a padded batch, which the
function then hands to transformers' sdpa). verl imports it in every worker through
``actor_rollout_ref.model.external_lib``.

Row boundaries come from transformers' ``cu_seq_lens_q``/``cu_seq_lens_k`` keywords where it passes them, else from the
position ids (a row starts wherever a position does not follow the one before it by 1), never from transformers'
mask: transformers builds a block-diagonal mask for packed rows only when no KV cache object exists, so a forward
with ``use_cache`` left on silently attends across rows.

On CUDA (bf16/fp16) the rows go to ``varlen_attn``; elsewhere (CPU tests, float32) each row runs causal sdpa on its
own, a slow but plain reference. With Ulysses SP > 1 (verl's group set) the heads are spread over the group by verl's
all-to-all helpers first, since verl's own Ulysses patch wraps flash-attn's entry point only.
"""

from __future__ import annotations

import functools
import inspect
import math
import weakref
from collections.abc import Callable
from typing import Any, Final

import torch
import torch.nn.functional as functional

from terminal_agent.errors import ConfigError
from terminal_agent.training.verl.attention_names import PACKED_ATTENTION_MODULE, PACKED_ATTENTION_NAME

#: torch's varlen kernels are FlashAttention-2's: Ampere (sm80) or newer.
MINIMUM_COMPUTE_CAPABILITY: Final = (8, 0)
_HALF_DTYPES: Final = (torch.bfloat16, torch.float16)


@functools.cache
def _varlen_function() -> Callable[..., Any] | None:
    """torch's ``varlen_attn``, or None before torch 2.10 (looked up once)."""
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError:
        return None
    return varlen_attn


@functools.cache
def _varlen_parameters() -> frozenset[str]:
    """Keyword names of this torch's ``varlen_attn`` (2.9 had ``is_causal``; 2.10 ``window_size``; later ``enable_gqa``)."""
    function = _varlen_function()
    return frozenset(inspect.signature(function).parameters) if function is not None else frozenset()


def varlen_attention_problem() -> str | None:
    """Why packed rows cannot run through torch's varlen kernels on this machine, or None when they can."""
    if _varlen_function() is None:
        return (f"torch {torch.__version__} has no torch.nn.attention.varlen (torch >= 2.10 has it): "
                "upgrade torch, or use attn_implementation flash_attention_2 with flash-attn installed")
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible: torch's varlen attention runs on CUDA GPUs only"
    capability = torch.cuda.get_device_capability()
    if capability < MINIMUM_COMPUTE_CAPABILITY:
        return (f"{torch.cuda.get_device_name()} has compute capability {capability[0]}.{capability[1]}: torch's "
                "varlen attention (FlashAttention-2 kernels) needs 8.0 or newer (A100, H100)")
    return None


def row_boundaries_from_positions(position_ids: torch.Tensor, batch_size: int = 1) -> torch.Tensor:
    """``cu_seqlens`` (int32, rows + 1) of the batch's tokens laid end to end: a row starts at each batch row's first
    token and wherever a position id does not follow the one before it by 1 (packed rows restart at 0)."""
    positions = position_ids[0] if position_ids.dim() == 3 else position_ids  # mrope (3, batch, length): text axis
    positions = positions.reshape(-1, positions.shape[-1]).expand(batch_size, -1)
    starts = torch.ones_like(positions, dtype=torch.bool)
    starts[:, 1:] = positions[:, 1:] != positions[:, :-1] + 1
    first_tokens = starts.flatten().nonzero().flatten()
    end = torch.tensor([positions.numel()], device=positions.device, dtype=first_tokens.dtype)
    return torch.cat([first_tokens, end]).to(torch.int32)


def _row_boundaries(batch_size: int, length: int, device: torch.device, kwargs: dict[str, Any]) -> torch.Tensor:
    """Rows from transformers' ``cu_seq_lens_q`` (one packed batch row, as its flattening collator passes them), else
    from ``position_ids``, else one row per batch row."""
    given_q, given_k = kwargs.get("cu_seq_lens_q"), kwargs.get("cu_seq_lens_k")
    if isinstance(given_q, torch.Tensor) and batch_size == 1 and (given_k is None or torch.equal(given_q, given_k)):
        return given_q.to(device=device, dtype=torch.int32)
    position_ids = kwargs.get("position_ids")
    if isinstance(position_ids, torch.Tensor):
        return _ROWS_OF_LAST_POSITIONS.boundaries(position_ids, batch_size, device)
    return torch.arange(0, (batch_size + 1) * length, length, device=device, dtype=torch.int32)


class _RowsOfLastPositions:
    """The row boundaries (and the longest row) of the last ``position_ids`` tensor seen. Every attention layer of a
    forward gets the same tensor: the rows are cut once a forward instead of once a layer, and so are the two host
    syncs that cutting them costs (``nonzero`` and the longest row's ``item``). A tensor changed in place, another
    tensor, batch size or device computes them afresh."""

    def __init__(self) -> None:
        self._positions: weakref.ref[torch.Tensor] | None = None
        self._key: tuple[int, int, torch.device] | None = None
        self._boundaries: torch.Tensor | None = None
        self._longest: int | None = None

    def boundaries(self, position_ids: torch.Tensor, batch_size: int, device: torch.device) -> torch.Tensor:
        key = (position_ids._version, batch_size, torch.device(device))
        if self._positions is not None and self._positions() is position_ids and self._key == key:
            assert self._boundaries is not None
            return self._boundaries
        boundaries = row_boundaries_from_positions(position_ids.to(device), batch_size)
        self._positions, self._key = weakref.ref(position_ids), key
        self._boundaries, self._longest = boundaries, None
        return boundaries

    def longest(self, boundaries: torch.Tensor) -> int:
        """The longest row of ``boundaries`` (remembered when they are the cached ones)."""
        if boundaries is self._boundaries and self._longest is not None:
            return self._longest
        longest = int((boundaries[1:] - boundaries[:-1]).max().item())
        if boundaries is self._boundaries:
            self._longest = longest
        return longest


_ROWS_OF_LAST_POSITIONS: Final = _RowsOfLastPositions()


def _reference_rows(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, bounds: list[int],
                    scale: float | None, sliding_window: int | None) -> torch.Tensor:
    """Causal sdpa on each row alone, (tokens, heads, dim) in and out: the plain reference (CPU, float32)."""
    groups = query.shape[1] // key.shape[1]
    outputs = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        row_query = query[start:end].transpose(0, 1).unsqueeze(0)
        row_key = key[start:end].transpose(0, 1).repeat_interleave(groups, dim=0).unsqueeze(0)
        row_value = value[start:end].transpose(0, 1).repeat_interleave(groups, dim=0).unsqueeze(0)
        if sliding_window is None:
            output = functional.scaled_dot_product_attention(row_query, row_key, row_value, is_causal=True,
                                                             scale=scale)
        else:
            index = torch.arange(end - start, device=query.device)
            distance = index[:, None] - index[None, :]
            allowed = (distance >= 0) & (distance < sliding_window)
            output = functional.scaled_dot_product_attention(row_query, row_key, row_value, attn_mask=allowed,
                                                             scale=scale)
        outputs.append(output.squeeze(0).transpose(0, 1))
    return torch.cat(outputs)


def _varlen_rows(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, boundaries: torch.Tensor,
                 scale: float | None, sliding_window: int | None) -> torch.Tensor:
    """torch's varlen kernel over (tokens, heads, dim), bridging the API differences of torch 2.9 .. 2.13."""
    function, parameters = _varlen_function(), _varlen_parameters()
    assert function is not None  # the caller checked
    arguments: dict[str, Any] = {}
    if "window_size" in parameters:  # (-1, 0) is causal; (W - 1, 0) keeps the last W tokens, as transformers' mask
        arguments["window_size"] = (-1 if sliding_window is None else sliding_window - 1, 0)
    elif sliding_window is None:
        arguments["is_causal"] = True
    else:
        raise ConfigError(f"the model's sliding window ({sliding_window}) needs torch >= 2.10's varlen window_size; "
                          f"torch {torch.__version__} has none: upgrade torch")
    if "scale" in parameters:
        arguments["scale"] = scale
    elif scale is not None:  # no scale argument: the kernel uses 1/sqrt(dim); fold the difference into the query
        query = query * (scale * math.sqrt(query.shape[-1]))
    if key.shape[1] != query.shape[1]:
        if "enable_gqa" in parameters:
            arguments["enable_gqa"] = True
        else:
            groups = query.shape[1] // key.shape[1]
            key, value = key.repeat_interleave(groups, dim=1), value.repeat_interleave(groups, dim=1)
    longest = _ROWS_OF_LAST_POSITIONS.longest(boundaries)
    output: torch.Tensor = function(query, key, value, boundaries, boundaries, longest, longest, **arguments)
    return output


def _attend_rows(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, boundaries: torch.Tensor,
                 scale: float | None, sliding_window: int | None) -> torch.Tensor:
    """Causal attention inside each row of ``boundaries``: (batch, heads, length, dim) in, (batch, length, heads, dim)
    out (transformers' attention functions return that layout)."""
    batch, heads, length, dim = query.shape
    flat_query = query.transpose(1, 2).reshape(batch * length, heads, dim)
    flat_key = key.transpose(1, 2).reshape(batch * length, key.shape[1], dim)
    flat_value = value.transpose(1, 2).reshape(batch * length, value.shape[1], value.shape[-1])
    if flat_key.dtype != flat_query.dtype:
        flat_key, flat_value = flat_key.to(flat_query.dtype), flat_value.to(flat_query.dtype)
    if flat_query.is_cuda and flat_query.dtype in _HALF_DTYPES and _varlen_function() is not None:
        output = _varlen_rows(flat_query, flat_key, flat_value, boundaries, scale, sliding_window)
    else:
        output = _reference_rows(flat_query, flat_key, flat_value, boundaries.tolist(), scale, sliding_window)
    return output.reshape(batch, length, heads, -1)


@functools.cache
def _ulysses_helpers() -> Any:
    """verl's ``verl.utils.ulysses`` where verl imports, else None (looked up once: a CPU test has no verl)."""
    try:
        import verl.utils.ulysses as ulysses
    except ImportError:
        return None
    return ulysses


def _ulysses_rows(ulysses: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                  position_ids: torch.Tensor, scale: float | None, sliding_window: int | None) -> torch.Tensor:
    """Ulysses SP: each rank holds 1/sp of the packed tokens with every head. An all-to-all gives each rank every token
    of 1/sp of the heads, the rows are cut from the position ids of the whole group, and a second all-to-all brings
    the outputs back to the rank's own tokens. (batch, heads, length/sp, dim) in, (batch, length/sp, heads, dim) out."""
    group = ulysses.get_ulysses_sequence_parallel_group()
    sp_size = int(ulysses.get_ulysses_sequence_parallel_world_size())
    query, key, value = query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2)
    repeats = max(sp_size // key.shape[2], 1)  # fewer KV heads than ranks: every rank needs one of its own
    if repeats > 1:
        key, value = key.repeat_interleave(repeats, dim=2), value.repeat_interleave(repeats, dim=2)
    query, key, value = (ulysses.gather_seq_scatter_heads(tensor, seq_dim=1, head_dim=2)
                         for tensor in (query, key, value))
    local_positions = position_ids.contiguous()
    gathered = [torch.empty_like(local_positions) for _ in range(sp_size)]
    torch.distributed.all_gather(gathered, local_positions, group=group)
    boundaries = row_boundaries_from_positions(torch.cat(gathered, dim=-1).to(query.device), query.shape[0])
    output = _attend_rows(query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), boundaries, scale,
                          sliding_window)
    gathered_output: torch.Tensor = ulysses.gather_heads_scatter_seq(output, seq_dim=1, head_dim=2)
    return gathered_output


def _ulysses_world_size() -> tuple[Any, int]:
    """verl's Ulysses helpers and the SP size of this process (1 without verl or without an SP group)."""
    ulysses = _ulysses_helpers()
    if ulysses is None:
        return None, 1
    return ulysses, int(ulysses.get_ulysses_sequence_parallel_world_size())


def packed_attention_forward(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                             attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
                             **kwargs: Any) -> tuple[torch.Tensor, None]:
    """transformers' attention signature: (batch, heads, length, dim) in, (batch, length, heads, dim) out.

    A real mask (a padded batch), a query shorter than its keys (decoding with a cache) or a bidirectional module go
    to transformers' sdpa unchanged; everything else is causal attention inside the rows found by
    :func:`_row_boundaries`."""
    causal = kwargs.get("is_causal")
    causal = getattr(module, "is_causal", True) if causal is None else causal
    if attention_mask is not None or query.shape[2] != key.shape[2] or not causal:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        output, _ = sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout,
                                           scaling=scaling, **kwargs)
        return output, None
    if dropout:
        raise ConfigError(f"{PACKED_ATTENTION_NAME}: attention dropout {dropout} is not supported (torch's varlen "
                          "kernel has none): set the model's attention_dropout to 0")
    if kwargs.get("softcap") is not None:
        raise ConfigError(f"{PACKED_ATTENTION_NAME}: the model's attention softcap is not supported: use "
                          "attn_implementation eager or flash_attention_2 for this model")
    sliding_window = kwargs.get("sliding_window")
    sliding_window = int(sliding_window) if sliding_window is not None else None
    position_ids = kwargs.get("position_ids")
    ulysses, sp_size = _ulysses_world_size()
    if sp_size > 1 and isinstance(position_ids, torch.Tensor):
        return _ulysses_rows(ulysses, query, key, value, position_ids, scaling, sliding_window), None
    boundaries = _row_boundaries(query.shape[0], query.shape[2], query.device, kwargs)
    return _attend_rows(query, key, value, boundaries, scaling, sliding_window), None


def packed_attention_mask(**arguments: Any) -> torch.Tensor | None:
    """transformers' mask hook for :data:`PACKED_ATTENTION_NAME`: no mask where queries and keys are the same tokens and
    nothing is padded (the attention finds the rows itself, so no (tokens x tokens) block-diagonal mask is built);
    otherwise transformers' own sdpa mask, which :func:`packed_attention_forward` hands to sdpa."""
    padding = arguments.get("attention_mask")
    kv_length = arguments.get("kv_length")
    same_tokens = arguments.get("q_length") == kv_length and not arguments.get("q_offset")
    if same_tokens and (padding is None or (padding.shape[-1] == kv_length and bool(padding.all()))):
        return None
    from transformers.masking_utils import sdpa_mask

    mask: torch.Tensor | None = sdpa_mask(**arguments)
    return mask


def register_packed_attention() -> None:
    """Register :data:`PACKED_ATTENTION_NAME` with transformers (idempotent; done on import)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(PACKED_ATTENTION_NAME, packed_attention_forward)
    AttentionMaskInterface.register(PACKED_ATTENTION_NAME, packed_attention_mask)


register_packed_attention()

__all__ = ["MINIMUM_COMPUTE_CAPABILITY", "PACKED_ATTENTION_MODULE", "PACKED_ATTENTION_NAME", "packed_attention_forward",
           "packed_attention_mask", "register_packed_attention", "row_boundaries_from_positions",
           "varlen_attention_problem"]
