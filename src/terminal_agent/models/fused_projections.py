"""Projections of one decoder layer fused into two matrix products, for decode steps on the GPU.

A decode step is bound by the number of kernels it launches, not by arithmetic: through peft,
each LoRA projection is five kernels (base product, ``A``, ``B``, scale, add), and a layer has
seven. :class:`FusedProjection` computes several projections that share an input (``q, k, v`` or
``gate, up``) as ``[x @ W.T | x @ A.T]`` in one product and adds ``(x @ A.T) @ (s * B).T`` in a
second (``addmm``), where ``W`` stacks the base weights, ``A`` the adapters' down-projections and
``s * B`` is block-diagonal. That is the same function as the modules compute, in 2 kernels.

The stacked weights are copies. They are refreshed from the modules whenever any source
parameter changed (its storage pointer or its in-place version counter), and refreshed *in place*,
so CUDA graphs that read them stay valid. :meth:`FusedProjection.refresh_if_changed` is called by
the sampler before it decodes.

Supported sources: ``nn.Linear``, and peft LoRA ``Linear`` layers with one active adapter, not
merged, without DoRA or a LoRA bias. Anything else raises :class:`UnfusableModuleError`; the
sampler then decodes through the modules themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class UnfusableModuleError(ValueError):
    """A projection module whose arithmetic this fusion does not reproduce."""


@dataclass
class _Source:
    weight: Any
    bias: Any
    lora_a: Any
    lora_b: Any
    scaling: float


def _source(module: Any) -> _Source:
    import torch

    if isinstance(module, torch.nn.Linear):
        return _Source(module.weight, module.bias, None, None, 0.0)
    base = getattr(module, "base_layer", None)
    if not isinstance(base, torch.nn.Linear) or not hasattr(module, "lora_A"):
        raise UnfusableModuleError(f"{type(module).__name__} is neither nn.Linear nor a peft LoRA Linear")
    if getattr(module, "merged", False) or getattr(module, "disable_adapters", False):
        return _Source(base.weight, base.bias, None, None, 0.0)
    active = [name for name in module.active_adapters if name in module.lora_A]
    if len(active) > 1:
        raise UnfusableModuleError("more than one active LoRA adapter")
    if not active:
        return _Source(base.weight, base.bias, None, None, 0.0)
    name = active[0]
    if getattr(module, "use_dora", {}).get(name, False):
        raise UnfusableModuleError("DoRA adapters are not fused")
    lora_b = module.lora_B[name]
    if getattr(lora_b, "bias", None) is not None:
        raise UnfusableModuleError("LoRA adapters with a bias are not fused")
    return _Source(base.weight, base.bias, module.lora_A[name].weight, lora_b.weight, float(module.scaling[name]))


class FusedProjection:
    """``x -> cat([m(x) for m in modules], -1)`` in two kernels; see the module docstring."""

    def __init__(self, modules: list[Any]):
        import torch

        self._modules = modules
        sources = [_source(m) for m in modules]
        self.out_sizes = [int(s.weight.shape[0]) for s in sources]
        weight = sources[0].weight
        self._rank_sizes = [int(s.lora_a.shape[0]) if s.lora_a is not None else 0 for s in sources]
        rank = sum(self._rank_sizes)
        out, inner = sum(self.out_sizes), int(weight.shape[1])
        self.rank = rank
        self.stacked = torch.zeros((out + rank, inner), dtype=weight.dtype, device=weight.device)
        """``[W; A]``: base weights of every module, then every adapter's down-projection."""
        self.scaled_b = torch.zeros((out, max(rank, 1)), dtype=weight.dtype, device=weight.device)
        """Block-diagonal ``s * B`` (zero where a module has no adapter)."""
        self.bias = torch.zeros(out, dtype=weight.dtype, device=weight.device) if any(s.bias is not None for s in sources) else None
        self._key: tuple[Any, ...] | None = None
        self.refresh_if_changed()

    def _parameters(self) -> list[Any]:
        found: list[Any] = []
        for source in (_source(m) for m in self._modules):
            found.extend(t for t in (source.weight, source.bias, source.lora_a, source.lora_b) if t is not None)
        return found

    def refresh_if_changed(self) -> bool:
        """Copy the modules' current weights into the stacked buffers (in place) when any changed."""
        import torch

        sources = [_source(m) for m in self._modules]
        key: tuple[Any, ...] = tuple(
            (t.data_ptr(), t._version) for s in sources for t in (s.weight, s.bias, s.lora_a, s.lora_b) if t is not None
        )
        key += tuple(s.scaling for s in sources)
        if key == self._key:
            return False
        with torch.no_grad():
            out = sum(self.out_sizes)
            row = rank_row = 0
            for source, size, r in zip(sources, self.out_sizes, self._rank_sizes):
                self.stacked[row : row + size].copy_(source.weight)
                if self.bias is not None:
                    if source.bias is not None:
                        self.bias[row : row + size].copy_(source.bias)
                    else:
                        self.bias[row : row + size].zero_()
                if r:
                    self.stacked[out + rank_row : out + rank_row + r].copy_(source.lora_a)
                    self.scaled_b[row : row + size, rank_row : rank_row + r].copy_(source.lora_b * source.scaling)
                row += size
                rank_row += r
        self._key = key
        return True

    def __call__(self, x: Any) -> Any:
        """``x`` ``[N, in]`` -> ``[N, sum(out_sizes)]``."""
        import torch

        out = sum(self.out_sizes)
        both = torch.matmul(x, self.stacked.t())
        base, hidden = both[:, :out], both[:, out:]
        if self.bias is not None:
            base = base + self.bias
        if not self.rank:
            return base
        return torch.addmm(base, hidden, self.scaled_b.t())


__all__ = ["FusedProjection", "UnfusableModuleError"]
