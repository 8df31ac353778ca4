"""A KV cache of fixed slots: one row per running call, allocated once, written in place.

One tensor ``[layers, 2, slots, kv_heads, capacity, head_dim]`` holds the keys and values of every
slot. A decode step writes one position per row and reads a window of each row's slot; nothing
is concatenated or reallocated per step. The rows in use are kept in slots ``0 .. n-1``: when
rows leave, the highest rows move down into the holes (:meth:`SlotKVCache.move`), so a decode
step covers a dense prefix of slots. When a row would outgrow ``capacity``, :meth:`grow` doubles
it (one copy; the CUDA graphs that read the old tensor are then captured again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CacheGeometry:
    """Shape of the model's attention, read from its config."""

    layers: int
    kv_heads: int
    head_dim: int


class SlotKVCache:
    """Keys and values of ``slots`` rows, each up to ``capacity`` positions (grown on demand up to ``max_capacity``)."""

    def __init__(self, geometry: CacheGeometry, slots: int, capacity: int, max_capacity: int, *, dtype: Any, device: Any):
        import torch

        self.geometry = geometry
        self.slots = slots
        self.max_capacity = max_capacity
        self.capacity = min(capacity, max_capacity)
        self._dtype, self._device = dtype, device
        shape = (geometry.layers, 2, slots, geometry.kv_heads, self.capacity, geometry.head_dim)
        self.tensor = torch.zeros(shape, dtype=dtype, device=device)
        self.generation = 0
        """Bumped when the storage is replaced (grown): anything holding views of it must be rebuilt."""

    @property
    def nbytes(self) -> int:
        return self.tensor.numel() * self.tensor.element_size()

    def keys(self, layer: int) -> Any:
        return self.tensor[layer, 0]

    def values(self, layer: int) -> Any:
        return self.tensor[layer, 1]

    def ensure_capacity(self, positions_needed: int) -> bool:
        """Make room for ``positions_needed`` positions per slot; True when the storage was replaced."""
        if positions_needed <= self.capacity:
            return False
        if positions_needed > self.max_capacity:
            raise ValueError(f"a row needs {positions_needed} positions; the cache holds at most {self.max_capacity}")
        capacity = self.capacity
        while capacity < positions_needed:
            capacity *= 2
        self.grow(min(capacity, self.max_capacity))
        return True

    def grow(self, capacity: int) -> None:
        import torch

        g = self.geometry
        grown = torch.zeros((g.layers, 2, self.slots, g.kv_heads, capacity, g.head_dim), dtype=self._dtype, device=self._device)
        grown[..., : self.capacity, :] = self.tensor
        self.tensor, self.capacity = grown, capacity
        self.generation += 1

    def write_prefix(self, layer: int, slots: Any, keys: Any, values: Any) -> None:
        """Store ``keys``/``values`` ``[rows, kv_heads, length, head_dim]`` at positions ``0 .. length-1`` of ``slots``."""
        length = keys.shape[2]
        self.tensor[layer, 0, slots, :, :length] = keys
        self.tensor[layer, 1, slots, :, :length] = values

    def copy_slots(self, sources: list[int], targets: list[int], length: int) -> None:
        """Copy the first ``length`` positions of each source slot into its target slot (all layers)."""
        if not sources:
            return
        import torch

        src = torch.tensor(sources, device=self._device)
        dst = torch.tensor(targets, device=self._device)
        self.tensor[:, :, dst, :, :length] = self.tensor[:, :, src, :, :length]

    def move(self, sources: list[int], targets: list[int], length: int) -> None:
        """Move rows down (``targets`` are free slots below ``sources``); same as a copy here."""
        self.copy_slots(sources, targets, length)


__all__ = ["CacheGeometry", "SlotKVCache"]
