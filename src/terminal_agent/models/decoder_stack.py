"""The forward pass of a Llama-style decoder over a :class:`~terminal_agent.models.slot_kv_cache.SlotKVCache`.

The model's own modules do the arithmetic (embeddings, norms, every projection, the MLP, the
rotary embedding, the LM head), so a peft/LoRA-wrapped policy is run with its adapters and its
current weights; only attention and the cache are done here:

- :meth:`DecoderStack.prefill` runs new prompts (right-padded, causal SDPA) and stores their keys
  and values at positions ``0 .. len-1`` of their slots;
- :meth:`DecoderStack.decode` runs one token for each of the slots ``0 .. B-1`` at per-row
  positions, writes its key and value in place and attends over the first ``window`` positions
  (a key counts when its position is at most the row's). Shapes depend only on ``B`` and
  ``window``, and nothing syncs with the host, so a step can be captured as a CUDA graph.

Supported: decoder layers with ``self_attn.{q,k,v,o}_proj``, ``input_layernorm``,
``post_attention_layernorm`` and ``mlp`` (Llama, Mistral without a sliding window, Qwen2, and
Qwen3 with its ``q_norm``/``k_norm``). Anything else raises :class:`UnsupportedModelError`, and the
caller falls back to the generic batched sampler.
"""

from __future__ import annotations

import inspect
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.models.slot_kv_cache import CacheGeometry, SlotKVCache

SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3")


class UnsupportedModelError(ConfigError):
    """The model's architecture is not one the slot-cache decoder runs."""


def _rotate_half(x: Any) -> Any:
    import torch

    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _is_rms_norm(module: Any) -> bool:
    """An RMS norm of the Llama kind: ``weight * (x / rms(x))``, computed in float32 (``variance_epsilon``)."""
    return hasattr(module, "variance_epsilon") and getattr(module, "weight", None) is not None and type(module).__name__.endswith("RMSNorm")


def _rms(module: Any, x: Any) -> Any:
    """``module(x)`` for an RMS norm in fewer kernels: the same float32 normalisation, then the weight."""
    import torch.nn.functional as F

    normed = F.rms_norm(x.float(), (x.shape[-1],), eps=module.variance_epsilon)
    return module.weight * normed.to(x.dtype)


class DecoderStack:
    """Functional forward of a causal LM's decoder layers; see the module docstring."""

    def __init__(self, model: Any):
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        config = base.config
        model_type = getattr(config, "model_type", None)
        if model_type not in SUPPORTED_MODEL_TYPES:
            raise UnsupportedModelError(
                f"the continuous-batching sampler runs {', '.join(SUPPORTED_MODEL_TYPES)} models; this one is {model_type!r}"
            )
        if getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", model_type == "mistral"):
            raise UnsupportedModelError("the continuous-batching sampler does not run sliding-window attention")
        decoder = getattr(base, "model", None)
        layers = getattr(decoder, "layers", None)
        if decoder is None or layers is None or not hasattr(base, "lm_head") or not hasattr(decoder, "rotary_emb"):
            raise UnsupportedModelError(f"{type(base).__name__} lacks model.layers / model.rotary_emb / lm_head")
        for index, layer in enumerate(layers):
            attention = getattr(layer, "self_attn", None)
            needed = [getattr(attention, name, None) for name in ("q_proj", "k_proj", "v_proj", "o_proj")]
            if attention is None or any(m is None for m in needed) or not all(
                hasattr(layer, name) for name in ("input_layernorm", "post_attention_layernorm", "mlp")
            ):
                raise UnsupportedModelError(f"decoder layer {index} is not a Llama-style layer")
        self.model = model
        self.base = base
        self.embed = decoder.embed_tokens
        self.layers = list(layers)
        self.norm = decoder.norm
        self.rotary = decoder.rotary_emb
        self.lm_head = base.lm_head
        self.heads = int(config.num_attention_heads)
        self.kv_heads = int(getattr(config, "num_key_value_heads", None) or self.heads)
        self.head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // self.heads)
        self.groups = self.heads // self.kv_heads
        self.scaling = self.head_dim ** -0.5
        self.vocab_size = int(config.vocab_size)
        self.max_positions = int(getattr(config, "max_position_embeddings", 0) or 0)
        self._rotary_takes_x = "x" in inspect.signature(self.rotary.forward).parameters
        self.fused: list[dict[str, Any]] | None = None

    def enable_fusion(self) -> bool:
        """Fuse each layer's projections for :meth:`decode` (see :mod:`terminal_agent.models.fused_projections`).

        False (and decoding stays on the modules) when a projection, norm or MLP is not of a kind the
        fusion reproduces exactly."""
        from terminal_agent.models.fused_projections import FusedProjection, UnfusableModuleError

        fused = []
        try:
            for layer in self.layers:
                attention, mlp = layer.self_attn, layer.mlp
                if hasattr(attention, "q_norm") or not all(hasattr(mlp, n) for n in ("gate_proj", "up_proj", "down_proj", "act_fn")):
                    return False
                if not all(_is_rms_norm(n) for n in (layer.input_layernorm, layer.post_attention_layernorm)):
                    return False
                fused.append({
                    "qkv": FusedProjection([attention.q_proj, attention.k_proj, attention.v_proj]),
                    "o": FusedProjection([attention.o_proj]),
                    "gate_up": FusedProjection([mlp.gate_proj, mlp.up_proj]),
                    "down": FusedProjection([mlp.down_proj]),
                })
        except UnfusableModuleError:
            return False
        if not _is_rms_norm(self.norm):
            return False
        self.fused = fused
        return True

    def refresh_fused(self) -> None:
        """Re-copy fused weights whose source parameters changed (in place: captured graphs stay valid)."""
        for layer in self.fused or []:
            for projection in layer.values():
                projection.refresh_if_changed()

    @property
    def geometry(self) -> CacheGeometry:
        return CacheGeometry(layers=len(self.layers), kv_heads=self.kv_heads, head_dim=self.head_dim)

    @property
    def dtype(self) -> Any:
        return self.embed.weight.dtype

    # --- pieces -------------------------------------------------------------------------------
    def _rope(self, hidden: Any, positions: Any) -> tuple[Any, Any]:
        """cos, sin ``[B, S, head_dim]`` for ``positions`` ``[B, S]`` (the model's own rotary module)."""
        cos_sin: tuple[Any, Any] = (
            self.rotary(hidden, positions) if self._rotary_takes_x else self.rotary(hidden, position_ids=positions)
        )  # a torch module's call is untyped
        return cos_sin

    def _qkv(self, layer: Any, x: Any, cos: Any, sin: Any) -> tuple[Any, Any, Any]:
        """Rotated queries ``[B, H, S, D]``, keys and values ``[B, KVH, S, D]`` of normed hidden ``x`` ``[B, S, C]``."""
        attention = layer.self_attn
        b, s, _ = x.shape
        q = attention.q_proj(x).view(b, s, self.heads, self.head_dim)
        k = attention.k_proj(x).view(b, s, self.kv_heads, self.head_dim)
        v = attention.v_proj(x).view(b, s, self.kv_heads, self.head_dim)
        if hasattr(attention, "q_norm"):  # Qwen3 normalises each head before the rotation
            q, k = attention.q_norm(q), attention.k_norm(k)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        return q, k, v

    def _finish_layer(self, layer: Any, residual: Any, attended: Any) -> Any:
        hidden = residual + layer.self_attn.o_proj(attended)
        return hidden + layer.mlp(layer.post_attention_layernorm(hidden))

    def logits(self, hidden: Any) -> Any:
        """float32 logits ``[B, V]`` of last hidden states ``[B, C]``."""
        return self.lm_head(self.norm(hidden)).float()

    # --- prefill ------------------------------------------------------------------------------
    def prefill(self, cache: SlotKVCache, slots: Any, input_ids: Any, lengths: Any, starts: Any | None = None,
                window: int | None = None) -> Any:
        """Run right-padded prompt pieces ``input_ids`` ``[R, S]`` (real lengths ``lengths`` ``[R]``) into ``slots``.

        Row ``r``'s tokens take positions ``starts[r] ..`` (``None``: 0, a fresh prompt); positions
        below ``starts[r]`` must already hold that row's keys and values (a reused prefix), and
        attention then covers the first ``window`` positions of the slot. Returns the float32 logits
        ``[R, V]`` at each row's last real token. Pad positions get keys and values too; they sit
        beyond the row's length, so no later query of that row sees them before a decode step
        overwrites them.
        """
        import torch
        import torch.nn.functional as F

        rows, width = input_ids.shape
        device = input_ids.device
        offsets = torch.arange(width, device=device)
        positions = offsets.expand(rows, width) if starts is None else starts[:, None] + offsets[None, :]
        mask = None
        if starts is not None:
            assert window is not None
            mask = (torch.arange(window, device=device)[None, None, :] <= positions[:, :, None])[:, None]  # [R, 1, S, W]
        hidden = self.embed(input_ids)
        cos, sin = self._rope(hidden, positions)
        slot_rows = slots[:, None]
        for index, layer in enumerate(self.layers):
            q, k, v = self._qkv(layer, layer.input_layernorm(hidden), cos, sin)
            if starts is None:
                cache.write_prefix(index, slots, k, v)
            else:
                cache.keys(index)[slot_rows, :, positions] = k.transpose(1, 2)
                cache.values(index)[slot_rows, :, positions] = v.transpose(1, 2)
                k, v = cache.keys(index)[slots, :, :window], cache.values(index)[slots, :, :window]
            if self.groups > 1:
                k, v = k.repeat_interleave(self.groups, dim=1), v.repeat_interleave(self.groups, dim=1)
            if mask is None:
                attended = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scaling)
            else:
                attended = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scaling)
            hidden = self._finish_layer(layer, hidden, attended.transpose(1, 2).reshape(rows, width, -1))
        last = hidden[torch.arange(rows, device=device), lengths - 1]
        return self.logits(last)

    # --- decode -------------------------------------------------------------------------------
    def decode(self, cache: SlotKVCache, tokens: Any, positions: Any, window: int) -> Any:
        if self.fused is not None:
            return self._decode_fused(cache, tokens, positions, window)
        return self._decode_modules(cache, tokens, positions, window)

    def _decode_fused(self, cache: SlotKVCache, tokens: Any, positions: Any, window: int) -> Any:
        """:meth:`decode` with fused projections and norms: the same function in about a third of the kernels."""
        import torch

        assert self.fused is not None
        b = tokens.shape[0]
        heads, kv_heads, dim = self.heads, self.kv_heads, self.head_dim
        rows = torch.arange(b, device=tokens.device)
        hidden = self.embed(tokens)  # [B, C]
        cos, sin = self._rope(hidden[:, None], positions[:, None])  # [B, 1, D]
        cos, sin = cos.view(b, 1, dim), sin.view(b, 1, dim)
        visible = torch.arange(window, device=tokens.device)[None, :] <= positions[:, None]
        bias = torch.zeros((b, 1, 1, window), dtype=torch.float32, device=tokens.device)
        bias = bias.masked_fill(~visible[:, None, None, :], float("-inf"))
        for index, (layer, fused) in enumerate(zip(self.layers, self.fused)):
            qkv = fused["qkv"](_rms(layer.input_layernorm, hidden)).view(b, heads + 2 * kv_heads, dim)
            qk = qkv[:, : heads + kv_heads]
            qk = qk * cos + _rotate_half(qk) * sin
            q, k, v = qk[:, :heads], qk[:, heads:], qkv[:, heads + kv_heads :]
            keys, values = cache.keys(index), cache.values(index)
            keys[rows, :, positions] = k
            values[rows, :, positions] = v
            grouped = q.reshape(b, kv_heads, self.groups, dim)
            scores = torch.matmul(grouped, keys[:b, :, :window].transpose(-1, -2)).float() * self.scaling + bias
            weights = torch.softmax(scores, dim=-1).to(hidden.dtype)
            attended = torch.matmul(weights, values[:b, :, :window]).reshape(b, heads * dim)
            hidden = hidden + fused["o"](attended)
            gate, up = fused["gate_up"](_rms(layer.post_attention_layernorm, hidden)).split(fused["gate_up"].out_sizes, dim=-1)
            hidden = hidden + fused["down"](layer.mlp.act_fn(gate) * up)
        return self.lm_head(_rms(self.norm, hidden)).float()

    def _decode_modules(self, cache: SlotKVCache, tokens: Any, positions: Any, window: int) -> Any:
        """One token for each of slots ``0 .. B-1`` (``tokens``, ``positions`` ``[B]``); float32 logits ``[B, V]``.

        Each row's key and value are written at its position; attention covers positions
        ``0 .. window-1`` of its slot, masked to those at most the row's position.
        """
        import torch

        b = tokens.shape[0]
        rows = torch.arange(b, device=tokens.device)
        hidden = self.embed(tokens[:, None])  # [B, 1, C]
        cos, sin = self._rope(hidden, positions[:, None])
        visible = torch.arange(window, device=tokens.device)[None, :] <= positions[:, None]  # [B, W]
        bias = torch.zeros((b, 1, 1, window), dtype=torch.float32, device=tokens.device)
        bias = bias.masked_fill(~visible[:, None, None, :], float("-inf"))
        for index, layer in enumerate(self.layers):
            q, k, v = self._qkv(layer, layer.input_layernorm(hidden), cos, sin)
            keys, values = cache.keys(index), cache.values(index)  # [slots, KVH, capacity, D]
            keys[rows, :, positions] = k[:, :, 0, :]
            values[rows, :, positions] = v[:, :, 0, :]
            window_keys = keys[:b, :, :window]  # [B, KVH, W, D] (a view)
            window_values = values[:b, :, :window]
            grouped = q.reshape(b, self.kv_heads, self.groups, self.head_dim)  # query head h = kv head h // G
            scores = torch.matmul(grouped, window_keys.transpose(-1, -2)).float() * self.scaling + bias
            weights = torch.softmax(scores, dim=-1).to(window_values.dtype)
            attended = torch.matmul(weights, window_values)  # [B, KVH, G, D]
            hidden = self._finish_layer(layer, hidden, attended.reshape(b, 1, self.heads * self.head_dim))
        return self.logits(hidden[:, 0])


__all__ = ["DecoderStack", "SUPPORTED_MODEL_TYPES", "UnsupportedModelError"]
