"""Two gloo processes run the packed attention's Ulysses branch through verl's own all-to-all helpers.

Run by ``test_packed_attention_ulysses.py`` in an interpreter where verl imports (the verl launch venv). Each rank
holds half of one packed row (every head), as verl's ``ulysses_pad_and_slice_inputs`` leaves it; the outputs and the
gradients of its half must equal the same attention computed on the whole row in one process (SP 1). Prints one
JSON line: the largest differences of each case.
"""

from __future__ import annotations

import json
import os
import sys

import torch
import torch.distributed as distributed
import torch.multiprocessing as multiprocessing

SP_SIZE = 2
#: (query heads, key/value heads, row lengths, Ulysses padding): KV heads equal to SP, fewer than SP (repeated), and
#: a total length verl pads by one position (its padding restarts at position 0: a row of its own).
CASES = [(4, 2, [5, 9, 3, 7], 0), (6, 1, [11, 2, 8, 3], 0), (4, 4, [6, 10, 5], 1)]


def _case(rank: int, heads: int, kv_heads: int, lengths: list[int], padding: int) -> dict[str, float]:
    from terminal_agent.training.verl.packed_attention import packed_attention_forward
    import verl.utils.ulysses as ulysses

    generator = torch.Generator().manual_seed(heads * 100 + kv_heads)
    positions = torch.cat([torch.arange(length) for length in lengths] + [torch.arange(padding)])[None]
    total, dim = positions.shape[1], 16
    full = {name: torch.randn(1, count, total, dim, generator=generator)
            for name, count in (("query", heads), ("key", kv_heads), ("value", kv_heads))}
    upstream = torch.randn(1, total, heads, dim, generator=generator)
    module = torch.nn.Module()

    ulysses.set_ulysses_sequence_parallel_group(None)  # SP 1: the whole row in this process
    whole = {name: tensor.clone().requires_grad_(True) for name, tensor in full.items()}
    expected, _ = packed_attention_forward(module, whole["query"], whole["key"], whole["value"], None,
                                           scaling=dim ** -0.5, position_ids=positions)
    expected_gradients = torch.autograd.grad((expected * upstream).sum(), list(whole.values()))

    ulysses.set_ulysses_sequence_parallel_group(distributed.group.WORLD)
    local = slice(rank * total // SP_SIZE, (rank + 1) * total // SP_SIZE)
    mine = {name: tensor[:, :, local].clone().requires_grad_(True) for name, tensor in full.items()}
    output, _ = packed_attention_forward(module, mine["query"], mine["key"], mine["value"], None,
                                         scaling=dim ** -0.5, position_ids=positions[:, local])
    gradients = torch.autograd.grad((output * upstream[:, local]).sum(), list(mine.values()))
    ulysses.set_ulysses_sequence_parallel_group(None)
    errors = {"output": (output - expected[:, local]).abs().max().item()}
    for name, got, want in zip(mine, gradients, expected_gradients):
        errors[f"grad_{name}"] = (got - want[:, :, local]).abs().max().item()
    return errors


def _rank(rank: int, port: str, results: dict[int, list[dict[str, float]]]) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    distributed.init_process_group("gloo", rank=rank, world_size=SP_SIZE)
    try:
        results[rank] = [_case(rank, *case) for case in CASES]
    finally:
        distributed.destroy_process_group()


def main() -> None:
    port = sys.argv[1]
    with multiprocessing.Manager() as manager:
        results = manager.dict()
        multiprocessing.spawn(_rank, args=(port, results), nprocs=SP_SIZE)
        print(json.dumps({str(rank): results[rank] for rank in range(SP_SIZE)}))


if __name__ == "__main__":
    main()
