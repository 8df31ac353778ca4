"""CUDA graphs of decode steps, one per (batch bucket, window bucket, nucleus) shape, captured on first use.

A decode step launches a few hundred small kernels (30 layers of projections, LoRA adapters,
norms, attention); eagerly, the host spends far longer issuing them than the GPU spends running
them. A captured graph replays the whole step with one launch. The step reads and writes only
fixed buffers (the lane state and the slot cache), so the same graph serves every step of that
shape, with the parameters' current values: in-place optimizer updates are seen by the next
replay. Graphs are dropped when the cache storage or any parameter's storage is replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def bucket(value: int, floor: int, ceiling: int) -> int:
    """The smallest power of two >= ``value`` (at least ``floor``), capped at ``ceiling``."""
    size = max(1, floor)
    while size < value:
        size *= 2
    return min(size, ceiling)


class DecodeGraphs:
    """Captured graphs of ``step(batch, window, nucleus)``; see the module docstring."""

    def __init__(self, step: Callable[[int, int, bool], None], state_buffers: Callable[[], list[Any]]):
        self._step = step
        self._state_buffers = state_buffers
        self._graphs: dict[tuple[int, int, bool], Any] = {}
        self._pool: Any = None
        self._key: tuple[Any, ...] | None = None
        self.captures = 0
        self.capture_s = 0.0

    def invalidate_if_changed(self, key: tuple[Any, ...]) -> None:
        """Drop every graph when ``key`` (cache generation, parameter storage pointers) changed."""
        if key != self._key:
            self.clear()
            self._key = key

    def clear(self) -> None:
        """Drop every graph and their memory pool (a pool whose graphs are gone is freed by torch:
        capturing into its old handle again trips the caching allocator, so a new pool is made)."""
        import torch

        if self._graphs:
            torch.cuda.synchronize()
        self._graphs.clear()
        self._pool = None
        self._key = None

    def run(self, batch: int, window: int, nucleus: bool) -> None:
        shape = (batch, window, nucleus)
        graph = self._graphs.get(shape)
        if graph is None:
            graph = self._capture(shape)
            self._graphs[shape] = graph
        graph.replay()

    def _capture(self, shape: tuple[int, int, bool]) -> Any:
        """Warm up on a side stream, then capture; the lane state is restored after each, so the
        real step (the replay that follows) starts from the same state. The warm-up's cache writes
        are the values the real step writes again, or positions it has not reached."""
        import time

        import torch

        started = time.monotonic()
        buffers = self._state_buffers()
        saved = [b.clone() for b in buffers]

        def restore() -> None:
            for buffer, value in zip(buffers, saved):
                buffer.copy_(value)

        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            self._step(*shape)
            restore()
        torch.cuda.current_stream().wait_stream(stream)
        if self._pool is None:
            self._pool = torch.cuda.graph_pool_handle()
        graph = torch.cuda.CUDAGraph()
        # thread_local: the trainer's forward and backward passes on another thread (a streamed update) neither
        # break this capture nor are refused while it runs; the capture stream is a non-blocking pool stream
        with torch.cuda.graph(graph, pool=self._pool, capture_error_mode="thread_local"):
            self._step(*shape)
        restore()
        torch.cuda.synchronize()
        self.captures += 1
        self.capture_s += time.monotonic() - started
        return graph


__all__ = ["DecodeGraphs", "bucket"]
