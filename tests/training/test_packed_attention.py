"""The project's packed attention (``terminal_agent_varlen``) against padded rows with a mask, on the real model.

verl's padding-free forward hands the model one row of concatenated rows, ``attention_mask=None`` and position ids
restarting at 0. These tests run exactly that call on the embedded SmolLM2-135M (GQA: 9 query, 3 KV heads) and
compare every token's log-prob and the gradients with the same rows padded and masked through transformers' sdpa.
On CPU the attention's plain per-row reference runs; on CUDA torch's varlen kernel (marked ``gpu``). A row whose
tokens change must not move another row's log-probs, and transformers' own sdpa, given packed rows with the cache
left on, is shown to attend across rows (so the isolation test can fail).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from terminal_agent.training.verl.packed_attention import (
    PACKED_ATTENTION_NAME,
    packed_attention_forward,
    row_boundaries_from_positions,
    varlen_attention_problem,
)

ROW_LENGTHS = [13, 29, 7, 21]
GRADIENT_WEIGHTS = ["model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight",
                    "model.layers.15.mlp.down_proj.weight", "model.layers.29.self_attn.o_proj.weight"]


def _rows(seed: int, vocabulary: int) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.randint(0, vocabulary, (length,), generator=generator) for length in ROW_LENGTHS]


def _token_log_probs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Log-prob of each next token of one row (length - 1 values)."""
    return torch.log_softmax(logits.float(), dim=-1)[:-1].gather(-1, tokens[1:, None].to(logits.device))[:, 0]


def packed_log_probs(model: torch.nn.Module, rows: list[torch.Tensor], **call: object) -> list[torch.Tensor]:
    """verl's padding-free call: one row of every row's tokens, position ids restarting, no mask."""
    device = next(model.parameters()).device
    input_ids = torch.cat(rows)[None].to(device)
    position_ids = torch.cat([torch.arange(len(row)) for row in rows])[None].to(device)
    logits = model(input_ids=input_ids, attention_mask=None, position_ids=position_ids, **call).logits[0]
    out, start = [], 0
    for row in rows:
        out.append(_token_log_probs(logits[start:start + len(row)], row))
        start += len(row)
    return out


def padded_log_probs(model: torch.nn.Module, rows: list[torch.Tensor]) -> list[torch.Tensor]:
    """The same rows right-padded into a batch with an attention mask."""
    device = next(model.parameters()).device
    longest = max(len(row) for row in rows)
    input_ids = torch.zeros(len(rows), longest, dtype=torch.long)
    mask = torch.zeros(len(rows), longest, dtype=torch.long)
    for index, row in enumerate(rows):
        input_ids[index, :len(row)], mask[index, :len(row)] = row, 1
    logits = model(input_ids=input_ids.to(device), attention_mask=mask.to(device), use_cache=False).logits
    return [_token_log_probs(logits[index, :len(row)], row) for index, row in enumerate(rows)]


def _gradients(model: torch.nn.Module, log_probs: list[torch.Tensor]) -> dict[str, torch.Tensor]:
    """Gradients of a few weights for a loss touching every token (weights differ per row, so rows are told apart)."""
    model.zero_grad()
    loss = sum((index + 1) * values.sum() for index, values in enumerate(log_probs))
    assert isinstance(loss, torch.Tensor)
    loss.backward()
    parameters = dict(model.named_parameters())
    return {name: parameters[name].grad.detach().float().cpu().clone() for name in GRADIENT_WEIGHTS}


def _load(model_dir: Path, attention: str, dtype: torch.dtype, device: str) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation=attention, dtype=dtype)
    return model.to(device).train()  # train(): dropout is 0 in SmolLM2; verl's actor runs in train mode


# --- row boundaries --------------------------------------------------------------------------------
def test_row_boundaries_start_wherever_positions_do_not_follow_by_one():
    packed = torch.tensor([[0, 1, 2, 0, 1, 0, 0, 1, 2, 3]])
    assert row_boundaries_from_positions(packed).tolist() == [0, 3, 5, 6, 10]
    # verl's Ulysses padding appends positions 0, 1, ...: a row of its own
    assert row_boundaries_from_positions(torch.tensor([[0, 1, 2, 3, 0, 1]])).tolist() == [0, 4, 6]
    # a batch of two plain rows (position ids unsqueezed, not expanded): each batch row starts a row
    assert row_boundaries_from_positions(torch.arange(4)[None], batch_size=2).tolist() == [0, 4, 8]


# --- the real model on CPU -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cpu_models() -> tuple[torch.nn.Module, torch.nn.Module]:
    from terminal_agent.models.embedded import ensure_embedded_model_cached

    model_dir = ensure_embedded_model_cached()
    return (_load(model_dir, PACKED_ATTENTION_NAME, torch.float32, "cpu"),
            _load(model_dir, "sdpa", torch.float32, "cpu"))


@pytest.mark.model
def test_packed_rows_match_padded_rows_in_log_probs_and_gradients(cpu_models):
    ours, reference = cpu_models
    rows = _rows(0, ours.config.vocab_size)
    packed = packed_log_probs(ours, rows, use_cache=False)
    padded = padded_log_probs(reference, rows)
    for packed_row, padded_row in zip(packed, padded):
        torch.testing.assert_close(packed_row, padded_row, rtol=1e-4, atol=1e-4)
    packed_gradients, padded_gradients = _gradients(ours, packed), _gradients(reference, padded)
    for name in GRADIENT_WEIGHTS:
        # float32's floor here: each row run alone through sdpa differs from the padded batch by up to 0.4% (the
        # first layer's attention weights; SmolLM2's activations are large); rows mixed would differ by O(1)
        error = (packed_gradients[name] - padded_gradients[name]).norm() / padded_gradients[name].norm()
        assert error.item() < 1e-2, (name, error.item())


@pytest.mark.model
def test_a_padded_batch_through_the_project_attention_is_transformers_sdpa(cpu_models):
    """With a real mask the attention hands the batch to sdpa: the same numbers as sdpa itself."""
    ours, reference = cpu_models
    rows = _rows(1, ours.config.vocab_size)
    with torch.no_grad():
        for mine, theirs in zip(padded_log_probs(ours, rows), padded_log_probs(reference, rows)):
            torch.testing.assert_close(mine, theirs, rtol=0, atol=1e-6)


@pytest.mark.model
def test_changing_one_row_moves_no_other_row(cpu_models):
    ours, _ = cpu_models
    rows = _rows(2, ours.config.vocab_size)
    changed = [(torch.roll(rows[0], 3) + 1) % ours.config.vocab_size, *rows[1:]]
    with torch.no_grad():
        before = packed_log_probs(ours, rows, use_cache=False)
        after = packed_log_probs(ours, changed, use_cache=False)
    assert not torch.allclose(before[0], after[0], atol=1e-3)  # the changed row itself did move
    for row_before, row_after in zip(before[1:], after[1:]):
        torch.testing.assert_close(row_before, row_after, rtol=0, atol=1e-6)


@pytest.mark.model
def test_the_cache_trap_breaks_sdpa_and_not_the_project_attention(cpu_models):
    """transformers builds its block-diagonal mask only without a cache object: sdpa with ``use_cache`` left on
    attends across packed rows; ours finds the rows from the position ids either way."""
    ours, reference = cpu_models
    rows = _rows(3, ours.config.vocab_size)
    with torch.no_grad():
        padded = padded_log_probs(reference, rows)
        trapped = packed_log_probs(reference, rows)  # use_cache left at the model's default (on)
        guarded = packed_log_probs(ours, rows)
    later_rows_error = max((mine - theirs).abs().max().item() for mine, theirs in zip(trapped[1:], padded[1:]))
    assert later_rows_error > 0.1, "sdpa with the cache on no longer mixes rows: the trap test proves nothing"
    for mine, theirs in zip(guarded, padded):
        torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-4)


# --- CUDA: torch's varlen kernel ---------------------------------------------------------------------
def _require_varlen() -> None:
    problem = varlen_attention_problem()
    if problem is not None:
        pytest.skip(problem)


def _plain_reference(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                     bounds: list[int]) -> torch.Tensor:
    """Float32 causal attention per row: (batch 1, heads, tokens, dim) in, (1, tokens, heads, dim) out."""
    groups = query.shape[1] // key.shape[1]
    outputs = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        scores = query[0, :, start:end].float() @ key[0, :, start:end].float().repeat_interleave(groups, 0).mT
        scores = scores / query.shape[-1] ** 0.5
        causal = torch.ones(end - start, end - start, dtype=torch.bool, device=query.device).tril()
        weights = scores.masked_fill(~causal, float("-inf")).softmax(-1)
        outputs.append(weights @ value[0, :, start:end].float().repeat_interleave(groups, 0))
    return torch.cat(outputs, dim=1).transpose(0, 1)[None]


@pytest.mark.gpu
@pytest.mark.parametrize("heads, kv_heads, lengths", [(8, 8, [5, 64, 1, 130]), (9, 3, [300, 17, 45]),
                                                       (16, 2, [1024, 3])])
def test_varlen_kernel_matches_a_plain_reference_with_gradients(heads, kv_heads, lengths):
    _require_varlen()
    torch.manual_seed(len(lengths))
    total, dim = sum(lengths), 64
    shapes = {"query": (1, heads, total, dim), "key": (1, kv_heads, total, dim), "value": (1, kv_heads, total, dim)}
    tensors = {name: torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for name, shape in shapes.items()}
    positions = torch.cat([torch.arange(length) for length in lengths])[None].cuda()
    module = torch.nn.Module()
    output, _ = packed_attention_forward(module, tensors["query"], tensors["key"], tensors["value"], None,
                                         scaling=dim ** -0.5, position_ids=positions)
    bounds = [0, *torch.tensor(lengths).cumsum(0).tolist()]
    expected = _plain_reference(tensors["query"], tensors["key"], tensors["value"], bounds)
    torch.testing.assert_close(output.float(), expected, rtol=0.02, atol=0.02)
    upstream = torch.randn_like(expected)
    kernel_gradients = torch.autograd.grad((output.float() * upstream).sum(), list(tensors.values()))
    reference_gradients = torch.autograd.grad((expected * upstream).sum(), list(tensors.values()))
    for mine, theirs in zip(kernel_gradients, reference_gradients):
        torch.testing.assert_close(mine.float(), theirs.float(), rtol=0.05, atol=0.05)


def _gpu_model_dir(tmp_path: Path) -> Path:
    """``TERMINAL_AGENT_TEST_MODEL_DIR`` (the GPU node's rebuilt bf16 copy of the embedded model: speed_hold.sh sets
    it), else the embedded model's directory where it is converted here; else SmolLM2-135M's shape, randomly
    initialised."""
    given = os.environ.get("TERMINAL_AGENT_TEST_MODEL_DIR")
    if given:
        return Path(given)
    try:
        from terminal_agent.models.embedded import ensure_embedded_model_cached

        return ensure_embedded_model_cached()
    except ImportError:
        from transformers import AutoModelForCausalLM, LlamaConfig

        config = LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                             num_attention_heads=9, num_key_value_heads=3, tie_word_embeddings=True,
                             max_position_embeddings=2048)
        torch.manual_seed(0)
        AutoModelForCausalLM.from_config(config).save_pretrained(tmp_path / "model")
        return tmp_path / "model"


@pytest.mark.gpu
def test_packed_rows_match_padded_rows_in_bf16_on_cuda(tmp_path):
    _require_varlen()
    model_dir = _gpu_model_dir(tmp_path)
    ours = _load(model_dir, PACKED_ATTENTION_NAME, torch.bfloat16, "cuda")
    reference = _load(model_dir, "sdpa", torch.bfloat16, "cuda")
    rows = _rows(0, ours.config.vocab_size)
    packed = packed_log_probs(ours, rows, use_cache=False)
    padded = padded_log_probs(reference, rows)
    mean_error = torch.cat([(mine - theirs).abs() for mine, theirs in zip(packed, padded)]).mean().item()
    assert mean_error < 0.01, mean_error
    packed_gradients, padded_gradients = _gradients(ours, packed), _gradients(reference, padded)
    for name in GRADIENT_WEIGHTS:
        similarity = torch.nn.functional.cosine_similarity(packed_gradients[name].flatten(),
                                                           padded_gradients[name].flatten(), dim=0).item()
        assert similarity > 0.99, (name, similarity)
    with torch.no_grad():  # rows stay apart through the kernel too
        changed = packed_log_probs(ours, [(torch.roll(rows[0], 3) + 1) % ours.config.vocab_size, *rows[1:]],
                                   use_cache=False)
        again = packed_log_probs(ours, rows, use_cache=False)
    for row_changed, row_again in zip(changed[1:], again[1:]):
        torch.testing.assert_close(row_changed, row_again, rtol=0, atol=0.02)
