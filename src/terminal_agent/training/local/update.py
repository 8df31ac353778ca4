"""One GRPO update of the local trainer: rows from the episodes' sampled tokens, masks, loss, step.

**Rows.** The assistant turns of every kept sample, with their ``prompt_ids`` (the rendered chat
exactly as the sampler saw it), ``completion_ids`` (exactly as sampled), the sampler's logprobs
and the sample's advantage, broadcast to every token of the turn (rLLM's broadcast mode).
Consecutive turns whose prompts extend each other exactly are merged into one row (the shared
history is computed once; the tokens in between are masked), otherwise each turn is its own row,
as rLLM's verl transform makes them. The trainer never re-tokenizes text: tokens come only
from :class:`~terminal_agent.outcome.TurnTokens`.

**Masks.** Only completion tokens are trained: prompt tokens (system prompt, instruction,
observations, earlier turns) carry mask 0. :func:`pack_rows` lays rows out left-padded with
explicit 0-based position ids from each row's first token (what the sampler used), so the last
``R`` logits of the forward cover every row's completion and no full-vocabulary logits are made
for prompt tokens.

**Attention of padding.** With a plain padding mask, a left-pad query attends to nothing: its
attention row is fully masked and its softmax normaliser (logsumexp) is ``-inf``. Forward kernels
return 0 for such rows; backward kernels need not be as careful (cuDNN's SDPA backward on Hopper,
torch 2.11+, is reported to overflow ``exp(0 - lse)`` into a NaN ``grad_q`` on rows whose
logsumexp is below -88.7 when the key length is 64 mod 128, and a pad row's gradient reaches the
weights through ``x^T dy`` although the loss never reads it). :func:`attention_mask_for` gives
the model a 4D mask in which every pad query attends to itself only, so no attention row is
empty; a real query still sees exactly its own row's earlier tokens, so no trained token's
logprob changes (``tests/training/test_nonfinite_gradients.py``). :data:`PAD_ATTENTION` =
``"none"`` restores the plain padding mask, for ``benchmarks/diagnose_nonfinite_gradients.py``.

**Old logprobs.** The sampler's own logprobs (same weights, same ``log_softmax(logits / T)``)
are the PPO "old" policy: the update is on-policy (one optimizer step per batch), so the ratio
starts at 1 up to float rounding; ``actor/sampler_trainer_logprob_diff`` reports that gap.

**Step.** Micro-batches by token budget; the gradients of the unnormalised losses accumulate and
are divided once by the whole batch's normaliser (exact gradient accumulation, and rows may arrive
group by group while the step's other episodes still run: :class:`StreamedUpdate`), gradient-norm
clip, AdamW step; a non-finite norm skips the step, as verl does.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from terminal_agent.outcome import EpisodeOutcome
from terminal_agent.training.algorithms.advantages import compute_advantages
from terminal_agent.training.algorithms.group_selection import GroupSelection
from terminal_agent.training.algorithms.loss_aggregation import loss_normaliser
from terminal_agent.training.algorithms.policy_loss import ActorLossConfig, actor_loss

logger = logging.getLogger(__name__)


@dataclass
class TrainingRow:
    """One token sequence to train on: a first prompt and a response of one or more assistant turns.

    ``response_ids`` holds every token after ``prompt_ids``: the assistant turns (mask 1) and, when
    consecutive turns are merged, the tokens between them (the turn's end, the observation, the
    next generation prompt; mask 0). ``old_logprobs`` is aligned with ``response_ids`` (0 where
    the mask is 0).
    """

    prompt_ids: list[int]
    response_ids: list[int]
    response_mask: list[int]
    old_logprobs: list[float]
    advantage: float
    group: int
    sample: int
    turns: list[int] = field(default_factory=list)
    """Indices of the episode's turns this row holds."""

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.response_ids)

    @property
    def trained_tokens(self) -> int:
        return sum(self.response_mask)

    @property
    def completion_ids(self) -> list[int]:
        """The trained tokens, in order (every assistant turn of the row, concatenated)."""
        return [t for t, m in zip(self.response_ids, self.response_mask) if m]


def rows_from_turns(turns: Sequence[Any], advantage: float, group: int, sample: int, *, merge: bool = True) -> list[TrainingRow]:
    """The rows of one episode's turns. With ``merge``, a turn whose prompt extends the previous
    row's tokens exactly (prompt + completion + what the chat added since) joins that row, so
    the shared history is computed once; any other turn starts a new row. No token is re-made:
    every id comes from the sampler's prompt and completion ids."""
    rows: list[TrainingRow] = []
    for index, turn in enumerate(turns):
        if not turn.completion_ids:
            continue
        if turn.logprobs is None:
            raise ValueError(f"group {group} sample {sample} turn {index}: no sampling logprobs (a token-in/token-out client is required)")
        comp, lps = list(turn.completion_ids), [float(x) for x in turn.logprobs]
        last = rows[-1] if rows else None
        if merge and last is not None:
            so_far = last.prompt_ids + last.response_ids
            prompt = list(turn.prompt_ids)
            if len(prompt) >= len(so_far) and prompt[: len(so_far)] == so_far:
                between = prompt[len(so_far) :]
                last.response_ids += between + comp
                last.response_mask += [0] * len(between) + [1] * len(comp)
                last.old_logprobs += [0.0] * len(between) + lps
                last.turns.append(index)
                continue
        rows.append(TrainingRow(list(turn.prompt_ids), comp, [1] * len(comp), lps, advantage, group, sample, [index]))
    return rows


def build_rows(
    groups: Sequence[Sequence[EpisodeOutcome]],
    selection: GroupSelection,
    *,
    estimator: str = "grpo",
    norm_by_std: bool = True,
    epsilon: float = 1e-6,
    merge_turns: bool = True,
    group_offset: int = 0,
) -> tuple[list[TrainingRow], list[np.ndarray]]:
    """Rows of the samples ``selection`` kept, with their group-relative advantages.

    Returns the rows and, per kept group, the advantages of its kept samples (for metrics).
    ``group_offset`` is added to each row's ``group`` (the rows of one group of a larger batch).
    """
    kept_groups = [(g, kept) for g, kept in enumerate(selection.kept) if kept]
    rewards = [np.array([groups[g][i].reward for i in kept], dtype=np.float64) for g, kept in kept_groups]
    advantages = compute_advantages(estimator, rewards, norm_by_std=norm_by_std, epsilon=epsilon) if rewards else []
    rows: list[TrainingRow] = []
    for (g, kept), group_adv in zip(kept_groups, advantages):
        for i, adv in zip(kept, group_adv):
            rows.extend(rows_from_turns(groups[g][i].turn_tokens, float(adv), g + group_offset, i, merge=merge_turns))
    return rows, advantages


@dataclass
class PackedRows:
    """Left-padded tensors of a micro-batch; response tensors are ``(B, R)``, right-aligned."""

    input_ids: Any
    attention_mask: Any
    position_ids: Any
    response_mask: Any
    """1 on completion tokens (the trained ones), 0 on padding."""
    response_ids: Any
    """The completion ids at their response positions (padding: the pad id)."""
    response_width: int

    def loss_mask_over_input(self) -> Any:
        """``(B, W)`` mask over ``input_ids``: 1 exactly on the trained completion tokens."""
        import torch

        mask = torch.zeros_like(self.input_ids, dtype=self.response_mask.dtype)
        mask[:, -self.response_width :] = self.response_mask
        return mask


def pack_rows(rows: Sequence[TrainingRow], pad_id: int, device: Any = None) -> PackedRows:
    import torch

    width = max(r.length for r in rows)
    resp = max(len(r.response_ids) for r in rows)
    b = len(rows)
    input_ids = torch.full((b, width), pad_id, dtype=torch.long)
    attention = torch.zeros((b, width), dtype=torch.long)
    response_mask = torch.zeros((b, resp), dtype=torch.float32)
    response_ids = torch.full((b, resp), pad_id, dtype=torch.long)
    for i, row in enumerate(rows):
        tokens = row.prompt_ids + row.response_ids
        input_ids[i, width - len(tokens) :] = torch.tensor(tokens, dtype=torch.long)
        attention[i, width - len(tokens) :] = 1
        c = len(row.response_ids)
        response_mask[i, resp - c :] = torch.tensor(row.response_mask, dtype=torch.float32)
        response_ids[i, resp - c :] = torch.tensor(row.response_ids, dtype=torch.long)
    position_ids = (attention.cumsum(-1) - 1).clamp(min=0)
    if device is not None:
        input_ids, attention, position_ids = input_ids.to(device), attention.to(device), position_ids.to(device)
        response_mask, response_ids = response_mask.to(device), response_ids.to(device)
    return PackedRows(input_ids, attention, position_ids, response_mask, response_ids, resp)


PAD_ATTENTION_MODES = ("self", "none")
PAD_ATTENTION = "self"
"""How left-pad queries attend in the trainer's forward: ``self`` (each attends to itself only,
no fully masked attention row) or ``none`` (the plain 2D padding mask: pad queries attend to
nothing). A module setting so the diagnostic can compare both; see the module docstring."""

_MASK_4D_IMPLEMENTATIONS = ("sdpa", "eager")
"""Attention implementations that take a ready 4D mask in the form built here (flash-attention
unpads by the 2D mask and flex builds its own block mask: they get the 2D mask)."""


def attention_mask_for(model: Any, packed: PackedRows, pad_attention: str | None = None) -> Any:
    """The attention mask handed to ``model`` for ``packed`` (see the module docstring).

    ``self``: a ``(B, 1, W, W)`` mask, boolean for SDPA (True: attend) and additive for eager
    attention, allowing key ``k`` to query ``q`` when ``k <= q`` and ``k`` is a real token, or
    ``k == q``. Real queries get exactly the causal padding mask; pad queries see only themselves.
    ``none``, or an attention implementation that takes no 4D mask: the 2D padding mask.
    """
    import torch

    mode = PAD_ATTENTION if pad_attention is None else pad_attention
    if mode not in PAD_ATTENTION_MODES:
        raise ValueError(f"pad_attention {mode!r}: expected one of {', '.join(PAD_ATTENTION_MODES)}")
    attention = packed.attention_mask
    implementation = getattr(getattr(model, "config", None), "_attn_implementation", None)
    if mode == "none" or implementation not in _MASK_4D_IMPLEMENTATIONS or bool(attention.all()):
        return attention
    width = attention.shape[-1]
    positions = torch.arange(width, device=attention.device)
    causal = positions[None, :] <= positions[:, None]  # (query, key)
    real_keys = attention.bool()[:, None, None, :]
    allowed = (causal & real_keys) | torch.eye(width, dtype=torch.bool, device=attention.device)
    if implementation == "sdpa":
        return allowed
    dtype = next(model.parameters()).dtype
    zero = torch.zeros((), dtype=dtype, device=attention.device)
    return torch.where(allowed, zero, torch.finfo(dtype).min)


def response_tensor(rows: Sequence[TrainingRow], values: Sequence[Sequence[float]], width: int, device: Any = None) -> Any:
    """Per-row values laid out like :class:`PackedRows`' response tensors (right-aligned, zero padding)."""
    import torch

    out = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, v in enumerate(values):
        if len(v):
            out[i, width - len(v) :] = torch.tensor(list(v), dtype=torch.float32)
    return out.to(device) if device is not None else out


def forward_response_logprobs(
    model: Any, packed: PackedRows, temperature: float, *, with_entropy: bool = False, pad_attention: str | None = None
) -> tuple[Any, Any]:
    """Per-token logprobs ``(B, R)`` of the completion tokens (and the entropy of each position).

    ``pad_attention`` overrides :data:`PAD_ATTENTION` (see :func:`attention_mask_for`)."""
    from terminal_agent.models.token_logprobs import sampling_log_softmax

    r = packed.response_width
    out = model(
        input_ids=packed.input_ids,
        attention_mask=attention_mask_for(model, packed, pad_attention),
        position_ids=packed.position_ids,
        use_cache=False,
        logits_to_keep=r + 1,
    )
    logits = out.logits[:, -(r + 1) : -1, :]  # logits at position j predict token j + 1
    logp_all = sampling_log_softmax(logits, temperature)
    logprobs = logp_all.gather(-1, packed.response_ids.unsqueeze(-1)).squeeze(-1)
    entropy = None
    if with_entropy:
        entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logprobs, entropy


def micro_batches(rows: Sequence[TrainingRow], token_budget: int) -> list[list[TrainingRow]]:
    """Rows grouped so that (rows x longest row) stays within ``token_budget`` (one row at least)."""
    ordered = sorted(rows, key=lambda r: r.length)
    batches: list[list[TrainingRow]] = []
    current: list[TrainingRow] = []
    for row in ordered:
        if current and (len(current) + 1) * max(row.length, current[-1].length) > token_budget:
            batches.append(current)
            current = []
        current.append(row)
    if current:
        batches.append(current)
    return batches


@dataclass
class UpdateStats:
    """What one update did."""

    rows: int = 0
    tokens: int = 0
    """Trained (completion) tokens."""
    micro_batches: int = 0
    loss: float = 0.0
    grad_norm: float = 0.0
    stepped: bool = False
    """False when there was nothing to train or the gradient norm was not finite."""
    skipped: bool = False
    """True when there were rows to train but the gradient norm was not finite, so no step was taken."""
    update_s: float = 0.0
    metrics: dict[str, float] = field(default_factory=dict)


def _grads_finite(params: Sequence[Any]) -> bool:
    import torch

    grads = [p.grad for p in params if p.grad is not None]
    return bool(torch.stack([g.isfinite().all() for g in grads]).all()) if grads else True


class StreamedUpdate:
    """One optimizer step whose rows arrive in parts: a group's rows as soon as it is graded.

    :meth:`add` runs the forward and backward passes of some rows at once, so the trainer can
    feed it each group while the step's other episodes still run. The batch normalisers that
    the loss divides by (trained tokens, rows, ``loss_scale_factor``) are not known until the
    last group is in, and every ``loss_agg_mode`` is linear in them, so :meth:`add` backpropagates
    the unnormalised loss and :meth:`finish` divides the accumulated gradients by the whole
    batch's normaliser (:func:`loss_normaliser`) before the clip and the optimizer step. The step
    equals one :func:`grpo_update` on all rows up to float rounding (micro-batches are formed
    within each part). Advantages are group-relative (each group's from its own rewards), so a
    group's rows are final when it is graded.
    """

    def __init__(self, model: Any, optimizer: Any, loss_config: ActorLossConfig, *, temperature: float,
                 grad_clip: float, pad_id: int, micro_batch_tokens: int = 4096):
        self.model, self.optimizer, self.loss_config = model, optimizer, loss_config
        self.temperature, self.grad_clip, self.pad_id = temperature, grad_clip, pad_id
        self.micro_batch_tokens = micro_batch_tokens
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.device = next(model.parameters()).device
        self._unit = replace(loss_config, loss_scale_factor=1.0)  # the unnormalised loss
        self.rows = self.tokens = self.micro_batches = 0
        self.longest_response = 0
        self.busy_s = 0.0
        """Seconds spent in :meth:`add` and :meth:`finish` (the update's own work)."""
        self._loss_sums: dict[str, float] = {}
        self._weighted: dict[str, float] = {}
        self._total_loss = 0.0
        self._diff_sum = 0.0
        self._nonfinite_from = ""
        optimizer.zero_grad(set_to_none=True)

    def add(self, rows: Sequence[TrainingRow]) -> None:
        """Forward and backward passes of ``rows`` (gradients accumulate until :meth:`finish`)."""
        import torch

        if not rows:
            return
        started = time.monotonic()
        self.model.train()
        config = self.loss_config
        for batch in micro_batches(rows, self.micro_batch_tokens):
            packed = pack_rows(batch, self.pad_id, self.device)
            width = packed.response_width
            old = response_tensor(batch, [r.old_logprobs for r in batch], width, self.device)
            adv = response_tensor(batch, [[r.advantage] * len(r.response_ids) for r in batch], width, self.device)
            ref = None
            if config.use_kl_loss:
                with torch.no_grad(), self.model.disable_adapter():
                    ref, _ = forward_response_logprobs(self.model, packed, self.temperature)
            logprobs, entropy = forward_response_logprobs(
                self.model, packed, self.temperature, with_entropy=config.entropy_coeff != 0.0
            )
            mask = packed.response_mask
            loss, metrics = actor_loss(
                old, logprobs, adv, mask, self._unit,
                entropy=entropy, ref_logprobs=ref, batch_num_tokens=1.0, global_batch_size=1.0,
            )
            loss.backward()
            self.micro_batches += 1
            if not self._nonfinite_from and not _grads_finite(self.params):
                # the first micro-batch whose gradient is not finite: named, so a skipped step can be traced
                self._nonfinite_from = (
                    f"micro-batch {self.micro_batches} ({len(batch)} rows, width {width}, longest row "
                    f"{max(len(r.prompt_ids) + len(r.response_ids) for r in batch)} tokens)"
                )
            self._total_loss += float(loss.detach())
            batch_tokens = float(mask.sum())
            for key, value in metrics.items():
                # losses are sums here (divided by the batch normaliser in finish); fractions are token-weighted
                if key.endswith("_loss"):
                    self._loss_sums[key] = self._loss_sums.get(key, 0.0) + value
                else:
                    self._weighted[key] = self._weighted.get(key, 0.0) + value * batch_tokens
            self._diff_sum += float(((logprobs.detach() - old).abs() * mask).sum())
        self.rows += len(rows)
        self.tokens += sum(r.trained_tokens for r in rows)
        self.longest_response = max(self.longest_response, max(len(r.response_ids) for r in rows))
        self.busy_s += time.monotonic() - started

    def finish(self) -> UpdateStats:
        """Divide the gradients by the batch normaliser, clip, and step (a non-finite norm skips the step)."""
        import torch

        stats = UpdateStats()
        if not self.rows:
            return stats
        started = time.monotonic()
        config = self.loss_config
        scale_factor = config.loss_scale_factor if config.loss_scale_factor is not None else self.longest_response
        normaliser = loss_normaliser(config.loss_agg_mode, tokens=self.tokens, rows=self.rows,
                                     loss_scale_factor=scale_factor)
        for param in self.params:
            if param.grad is not None:
                param.grad.div_(normaliser)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.params, self.grad_clip)
        stats.grad_norm = float(grad_norm)
        if math.isfinite(stats.grad_norm):
            self.optimizer.step()
            stats.stepped = True
        else:
            stats.skipped = True
            logger.warning("gradient norm is %s: optimizer step skipped (first non-finite gradient after %s)",
                           stats.grad_norm, self._nonfinite_from or "the clip")
        self.optimizer.zero_grad(set_to_none=True)
        stats.rows, stats.tokens, stats.micro_batches = self.rows, self.tokens, self.micro_batches
        stats.loss = self._total_loss / normaliser
        sums = {key: value / normaliser for key, value in self._loss_sums.items()}
        sums.update({key: value / self.tokens for key, value in self._weighted.items()})
        stats.metrics = {**sums, "actor/loss": stats.loss, "actor/grad_norm": stats.grad_norm,
                         "actor/sampler_trainer_logprob_diff": self._diff_sum / self.tokens}
        self.busy_s += time.monotonic() - started
        stats.update_s = self.busy_s
        return stats


def grpo_update(
    model: Any,
    optimizer: Any,
    rows: Sequence[TrainingRow],
    loss_config: ActorLossConfig,
    *,
    temperature: float,
    grad_clip: float,
    pad_id: int,
    micro_batch_tokens: int = 4096,
) -> UpdateStats:
    """One optimizer step on ``rows`` (see the module docstring). No rows: no step."""
    update = StreamedUpdate(model, optimizer, loss_config, temperature=temperature, grad_clip=grad_clip,
                            pad_id=pad_id, micro_batch_tokens=micro_batch_tokens)
    update.add(rows)
    return update.finish()


__all__ = [
    "PAD_ATTENTION",
    "PAD_ATTENTION_MODES",
    "PackedRows",
    "TrainingRow",
    "attention_mask_for",
    "UpdateStats",
    "build_rows",
    "rows_from_turns",
    "forward_response_logprobs",
    "grpo_update",
    "micro_batches",
    "pack_rows",
    "response_tensor",
    "StreamedUpdate",
]
