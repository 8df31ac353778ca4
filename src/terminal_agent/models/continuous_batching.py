"""The continuous-batching sampler: every concurrent call decodes in one running batch.

:class:`ContinuousBatchingClient` keeps one worker thread that owns a fixed-slot KV cache
(:mod:`terminal_agent.models.slot_kv_cache`) and runs the model's decoder through
:mod:`terminal_agent.models.decoder_stack`:

- **Continuous batching.** A call that arrives while others decode joins at the next step: its
  prompt is prefilled into a free slot (prefill and decode are separate passes), and from then
  on it decodes with the rest. A row that ends (EOS, token cap, closed action tag, stop string)
  is answered at once and its slot is freed; the highest rows move down so a step covers a
  dense prefix of slots. Calls of a GRPO group that share a prompt share one prefill.
- **No reallocation per step.** The cache is allocated once (and doubled, rarely, when a row
  outgrows it); a step writes one position per row in place.
- **On the device.** Sampling (temperature, top-p, per-row seeds via counter-based noise) runs on
  the device (:mod:`terminal_agent.models.device_sampling`); one small copy per step brings the
  chosen ids and logprobs to the host. On CUDA each step shape (batch and window buckets) is
  captured once as a CUDA graph and replayed (:mod:`terminal_agent.models.decode_graphs`).
- **Current weights.** The sampler runs the policy object itself (plain or peft/LoRA-wrapped):
  there is no copy to sync. Optimizer steps update parameters in place, which the next replay
  reads; replacing a parameter's storage (or growing the cache) drops the graphs, which are
  captured again on next use.

Replies follow the :class:`~terminal_agent.models.embedded.EmbeddedModelClient` contract:
``prompt_ids``, ``completion_ids`` cut on a token boundary so they decode to ``text``, and
``logprobs`` = ``log_softmax(logits / T)`` of each sampled id over the full distribution (T = 1
when greedy). Models whose architecture the slot decoder does not run raise
:class:`~terminal_agent.models.decoder_stack.UnsupportedModelError` when the client is built.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from terminal_agent.errors import ModelProviderError
from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.base import ContextWindowExceededError
from terminal_agent.models.decode_graphs import DecodeGraphs, bucket
from terminal_agent.models.decoder_stack import DecoderStack
from terminal_agent.models.device_sampling import choose_tokens
from terminal_agent.models.embedded import EMBEDDED_MODEL_NAME, EmbeddedModelClient
from terminal_agent.models.local_sampler_base import LocalSamplerBase, LocalSamplingSettings, SamplingRequest
from terminal_agent.models.slot_kv_cache import SlotKVCache
from terminal_agent.models.token_logprobs import decode_attention_backends, effective_temperature, model_device

logger = logging.getLogger(__name__)

_WINDOW_FLOOR = 128
"""Smallest attention window of a decode step (windows are powers of two from here)."""


class ContinuousBatchingConfig(LocalSamplingSettings):
    """Settings of the continuous-batching sampler."""

    max_batch_size: int = Field(default=64, ge=1)
    """Slots of the KV cache: the most calls decoding at once (more wait for a free slot)."""
    max_sequence_length: int | None = Field(default=None, ge=16)
    """Longest prompt + reply a slot holds; ``None``: the model's ``max_position_embeddings`` (at most 8192)."""
    initial_capacity: int = Field(default=1024, ge=16)
    """Positions per slot allocated at first; doubled when a row needs more (up to ``max_sequence_length``)."""
    cuda_graphs: bool = True
    """On CUDA, replay decode steps as captured CUDA graphs (off: eager steps, for debugging)."""
    fuse_projections: bool = True
    """On CUDA, decode with each layer's projections fused into two products (same function, fewer kernels)."""
    prefix_cache_slots: int | None = Field(default=None, ge=0)
    """Extra slots that keep the keys and values of answered calls, so a later prompt that starts with
    the same tokens (the agent's next turn, or the shared system prompt) prefills only what is new;
    ``None``: as many as ``max_batch_size``; 0 turns reuse from answered calls off."""
    min_prefix_reuse: int = Field(default=32, ge=1)
    """Shortest shared prefix (tokens) worth copying instead of prefilling."""
    gather_window_s: float = Field(default=0.02, ge=0.0)
    """When idle, wait this long after a call for others before the first prefill (each arrival restarts it)."""
    max_gather_s: float = Field(default=0.1, ge=0.0)
    """Cap on that wait, counted from the first call."""
    idle_exit_s: float = Field(default=30.0, gt=0.0)
    """The worker thread ends after this long without a call (and starts again with the next one)."""
    prefill_token_budget: int = Field(default=16384, ge=256)
    """Most (rows x padded length) tokens in one prefill pass; more prompts are prefilled in several."""


@dataclass
class EngineStats:
    """What the worker did (read it to see batching, graph use and where the time went)."""

    requests: int = 0
    """Calls answered (including failed ones)."""
    prefills: int = 0
    """Prefill passes."""
    prefill_tokens: int = 0
    """Prompt tokens run through the model in prefills (reused prefixes are not counted)."""
    reused_prefix_tokens: int = 0
    """Prompt tokens whose keys and values were copied from another slot instead of prefilled."""
    decode_steps: int = 0
    """Decode steps (each advances every running row by one token)."""
    generated_tokens: int = 0
    """Sampled tokens, summed over rows (before cuts)."""
    busy_s: float = 0.0
    """Wall seconds with at least one row in the engine."""
    prefill_s: float = 0.0
    decode_s: float = 0.0
    """Wall seconds in decode steps (launch, device work and the copy of the chosen ids)."""
    graph_replays: int = 0
    graph_captures: int = 0
    graph_capture_s: float = 0.0
    largest_batch: int = 0
    """Most rows decoding in one step."""
    row_steps: int = 0
    """Rows summed over decode steps (``row_steps / decode_steps`` is the mean batch)."""


@dataclass
class _Row:
    """A request in a slot: what it sampled so far."""

    request: SamplingRequest
    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)

    @property
    def position(self) -> int:
        """Position of the token fed at the next step (the last sampled one)."""
        return len(self.request.prompt_ids) + len(self.ids) - 1


@dataclass
class _Parked:
    """The keys and values of an answered call, kept in a prefix-cache slot."""

    tokens: Any
    """numpy int64 array: the tokens whose keys and values the slot holds (positions 0 .. len-1)."""
    last_used: int


def _common_prefix(a: Any, b: Any) -> int:
    """Length of the common prefix of two numpy int arrays."""
    import numpy as np

    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


class _LaneState:
    """Per-slot device buffers the decode step reads and updates (fixed addresses, for graphs)."""

    def __init__(self, slots: int, device: Any):
        import torch

        def zeros(dtype: Any) -> Any:
            return torch.zeros(slots, dtype=dtype, device=device)

        self.tokens = zeros(torch.int64)
        self.positions = zeros(torch.int64)
        self.live = zeros(torch.int64)
        """1 on rows in use: only they advance (spare lanes of a bucket stay at position 0)."""
        self.steps = zeros(torch.int64)
        """Tokens sampled so far per row: the noise counter."""
        self.seeds = zeros(torch.int64)
        self.temperatures = torch.ones(slots, dtype=torch.float32, device=device)
        self.greedy = zeros(torch.bool)
        self.top_ps = torch.ones(slots, dtype=torch.float32, device=device)
        self.out = torch.zeros((slots, 2), dtype=torch.float64, device=device)
        """Chosen id and its logprob per row, written by each step (one copy to the host)."""
        self.device = device

    def mutable(self) -> list[Any]:
        """The buffers a step changes (saved and restored around graph warm-up and capture)."""
        return [self.tokens, self.positions, self.steps, self.out]

    def set_rows(self, slots: list[int], **values: list[Any]) -> None:
        import torch

        index = torch.tensor(slots, device=self.device)
        for name, column in values.items():
            buffer = getattr(self, name)
            buffer[index] = torch.tensor(column, dtype=buffer.dtype).to(self.device)

    def move_rows(self, sources: list[int], targets: list[int]) -> None:
        import torch

        src = torch.tensor(sources, device=self.device)
        dst = torch.tensor(targets, device=self.device)
        for buffer in (self.tokens, self.positions, self.live, self.steps, self.seeds, self.temperatures, self.greedy, self.top_ps):
            buffer[dst] = buffer[src]

    def clear_rows(self, start: int) -> None:
        """Spare lanes from ``start`` on: not live, position 0."""
        self.live[start:] = 0
        self.positions[start:] = 0


class ContinuousBatchingClient(LocalSamplerBase):
    """Thread-safe :class:`~terminal_agent.interfaces.ModelClient`; see the module docstring.

    ``model`` is a causal LM (plain or peft-wrapped, used as given) on any device, ``tokenizer``
    its tokenizer. Sampling keywords per call: ``temperature``, ``top_p``, ``max_tokens`` (or
    ``max_new_tokens``), ``stop``, ``seed``. The model is in eval mode while rows decode and its
    previous mode is restored whenever the engine falls idle.
    """

    is_thread_safe = True
    """Calls from many threads are the point: they share the running batch."""

    def __init__(self, model: Any, tokenizer: Any, config: ContinuousBatchingConfig | None = None, *, name: str | None = None):
        import torch

        super().__init__(model, tokenizer, config or ContinuousBatchingConfig(), name or f"embedded-continuous/{EMBEDDED_MODEL_NAME}")
        self._stack = DecoderStack(model)
        self._device = model_device(model)
        limit = self.config.max_sequence_length or min(self._stack.max_positions or 8192, 8192)
        self.max_sequence_length = limit
        self._use_graphs = self.config.cuda_graphs and self._device.type == "cuda"
        self._fused = self._device.type == "cuda" and self.config.fuse_projections and self._stack.enable_fusion()
        park = self.config.max_batch_size if self.config.prefix_cache_slots is None else self.config.prefix_cache_slots
        self._park_slots = list(range(self.config.max_batch_size, self.config.max_batch_size + park))
        self._parked: dict[int, _Parked] = {}
        self._admitting: list[SamplingRequest] = []
        self._clock = 0
        self.stats = EngineStats()
        self._pending: list[SamplingRequest] = []
        self._cond = threading.Condition()
        self._worker: threading.Thread | None = None
        self._closed = False
        self._rows: list[_Row] = []  # index = slot
        self._cache: SlotKVCache | None = None
        self._lanes: _LaneState | None = None
        self._graphs: DecodeGraphs | None = None
        self._seed_source = random.Random(int(torch.initial_seed()) & 0xFFFFFFFF)

    @classmethod
    def from_embedded(
        cls, client: EmbeddedModelClient | None = None, config: ContinuousBatchingConfig | None = None
    ) -> ContinuousBatchingClient:
        """Share the model and tokenizer of an :class:`EmbeddedModelClient` (a fresh default one when ``None``).

        With no ``config``, the embedded client's token cap, temperature, top_p and stop settings carry over.
        """
        client = client or cls.default_embedded()
        return cls(client.model, client.tokenizer, config or cls.embedded_config(client, ContinuousBatchingConfig))

    # --- the caller's side ----------------------------------------------------------------
    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        request = self._request(messages, sampling)
        if len(request.prompt_ids) >= self.max_sequence_length:
            raise ContextWindowExceededError(
                f"prompt of {len(request.prompt_ids)} tokens does not fit the sampler's {self.max_sequence_length}-token slots"
            )
        request.max_new_tokens = min(request.max_new_tokens, self.max_sequence_length - len(request.prompt_ids))
        with self._cond:
            if request.seed is None:  # every row gets a seed: the device draws by (seed, step)
                request.seed = self._seed_source.getrandbits(62)
            if self._closed:
                raise ModelProviderError("the continuous-batching sampler is closed")
            self._pending.append(request)
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._serve, name="continuous-batching", daemon=True)
                self._worker.start()
            self._cond.notify_all()
        return request.wait()

    def close(self) -> None:
        """Stop the worker once the running rows are answered; later calls fail. Frees the cache."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout=60)
        self._cache = self._lanes = self._graphs = None
        self._parked.clear()

    # --- the worker's side ----------------------------------------------------------------
    def _serve(self) -> None:
        import torch

        if self._device.type == "cuda":
            torch.cuda.set_device(self._device)
        while True:
            first = self._wait_for_work()
            if first is None:
                return
            self._busy_period()

    def _wait_for_work(self) -> bool | None:
        """Block until a call is pending (then gather briefly); ``None`` once closed and drained, or after
        ``idle_exit_s`` without a call (the worker then ends, so an unused client can be collected with
        its cache; the next call starts a new worker)."""
        config = self.config
        with self._cond:
            while not self._pending:
                if self._closed:
                    return None
                if not self._cond.wait(config.idle_exit_s) and not self._pending:
                    self._worker = None  # under the lock: a caller from now on starts a new worker
                    return None
            first = time.monotonic()
            while len(self._pending) < config.max_batch_size:
                remaining = min(self._pending[-1].arrived + config.gather_window_s, first + config.max_gather_s) - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
        return True

    def _busy_period(self) -> None:
        """Decode until no row is running and no call is pending."""
        import torch

        started = time.monotonic()
        threads_before = torch.get_num_threads()
        if self._device.type == "cpu":
            torch.set_num_threads(self.num_threads)  # process-wide in torch, so restored below
        was_training = self._model.training
        self._model.eval()
        try:
            with torch.inference_mode():
                self._prepare()
                while True:
                    self._admit()
                    now = time.monotonic()
                    self.stats.busy_s += now - started  # credited as it goes, so stats read mid-run are current
                    started = now
                    if not self._rows:
                        with self._cond:
                            if not self._pending:
                                return
                        continue
                    self._decode_step()
        except Exception as exc:  # noqa: BLE001 - the worker must answer every waiting caller, never die
            self._fail_all(exc)
        finally:
            self._model.train(was_training)
            torch.set_num_threads(threads_before)
            self.stats.busy_s += time.monotonic() - started

    def _prepare(self) -> None:
        """Allocate the cache and lanes on first use; drop graphs whose parameters moved."""
        if self._cache is None:
            self._cache = SlotKVCache(
                self._stack.geometry, self.config.max_batch_size + len(self._park_slots),
                min(self.config.initial_capacity, self.max_sequence_length), self.max_sequence_length,
                dtype=self._stack.dtype, device=self._device,
            )
            self._lanes = _LaneState(self.config.max_batch_size, self._device)
            if self._use_graphs:
                self._graphs = DecodeGraphs(self._graph_step, self._lanes.mutable)
        if self._fused:
            self._stack.refresh_fused()
        if self._graphs is not None:
            self._graphs.invalidate_if_changed(self._storage_key())

    def _storage_key(self) -> tuple[Any, ...]:
        assert self._cache is not None
        return (self._cache.generation, *(p.data_ptr() for p in self._model.parameters()))

    def _fail_all(self, exc: BaseException) -> None:
        error = exc if isinstance(exc, ModelProviderError) else ModelProviderError(f"continuous-batching sampling failed: {exc}")
        if error is not exc:
            error.__cause__ = exc
        with self._cond:
            waiting, self._pending = self._pending, []
        admitting, self._admitting = self._admitting, []
        for request in [row.request for row in self._rows] + admitting + waiting:
            if not request.done.is_set():
                request.error = error
                request.done.set()
                self.stats.requests += 1
        self._rows = []
        if self._lanes is not None:
            import torch

            with torch.inference_mode():  # the lanes are inference tensors
                self._lanes.clear_rows(0)
        logger.warning("continuous-batching sampler failed; %d calls answered with the error: %s", len(waiting), exc)

    # --- admission (prefill) -------------------------------------------------------------
    def _admit(self) -> None:
        """Move pending calls into free slots: copy the longest reusable prefix, prefill the rest, sample a first token."""
        with self._cond:
            free = self.config.max_batch_size - len(self._rows)
            if free <= 0 or not self._pending:
                return
            admitted, self._pending = self._pending[:free], self._pending[free:]
            self._admitting = admitted  # answered by _fail_all if the prefill breaks
        import numpy as np
        import torch

        assert self._cache is not None and self._lanes is not None
        started = time.monotonic()
        longest = max(len(r.prompt_ids) for r in admitted)
        if self._cache.ensure_capacity(longest + 1) and self._graphs is not None:
            self._graphs.invalidate_if_changed(self._storage_key())
        first_slot = len(self._rows)
        slots = list(range(first_slot, first_slot + len(admitted)))
        prompts = [np.asarray(r.prompt_ids, dtype=np.int64) for r in admitted]
        candidates = self._reuse_candidates()
        # plan: (slot, request, reuse source slot or None, reused length); a call sharing a prefix only
        # with another new call waits for that one's prefill (second pass)
        first_pass: list[tuple[int, SamplingRequest, int | None, int]] = []
        second_pass: list[tuple[int, SamplingRequest, int | None, int]] = []
        leaders: list[tuple[int, Any]] = []
        for slot, request, prompt in zip(slots, admitted, prompts):
            limit = len(prompt) - 1  # the last prompt token is always run: it gives the first logits
            source, reused = None, 0
            for candidate, tokens in candidates:
                shared = min(_common_prefix(prompt, tokens), limit)
                if shared > reused:
                    source, reused = candidate, shared
            leader, shared_new = None, 0
            for other, tokens in leaders:
                shared = min(_common_prefix(prompt, tokens), limit)
                if shared > shared_new:
                    leader, shared_new = other, shared
            if leader is not None and shared_new >= self.config.min_prefix_reuse and shared_new > reused:
                second_pass.append((slot, request, leader, shared_new))
                continue
            if reused < self.config.min_prefix_reuse:
                source, reused = None, 0
            first_pass.append((slot, request, source, reused))
            leaders.append((slot, prompt))
        logits_by_slot: dict[int, Any] = {}
        for plan in (first_pass, second_pass):
            self._copy_prefixes([(source, slot, reused) for slot, _, source, reused in plan if source is not None])
            for chunk in self._prefill_chunks(plan):
                self._prefill(chunk, logits_by_slot)
        for source in {s for _, _, s, _ in first_pass + second_pass if s is not None and s in self._parked}:
            self._clock += 1
            self._parked[source].last_used = self._clock
        # the first token of each new row, sampled like every later one (counter 0)
        lanes = self._lanes
        first_logits = torch.stack([logits_by_slot[s] for s in slots])
        temperatures = torch.tensor([effective_temperature(r.temperature) for r in admitted], device=self._device)
        greedy = torch.tensor([r.temperature <= 0 for r in admitted], device=self._device)
        top_ps = torch.tensor([r.top_p for r in admitted], dtype=torch.float32, device=self._device)
        seeds = torch.tensor([r.seed for r in admitted], dtype=torch.int64, device=self._device)
        chosen, logprobs = choose_tokens(
            first_logits, temperatures, greedy, top_ps, seeds, torch.zeros_like(seeds),
            nucleus=any(r.top_p < 1.0 and r.temperature > 0 for r in admitted),
        )
        chosen_list, logprob_list = chosen.tolist(), logprobs.tolist()
        lanes.set_rows(
            slots,
            tokens=chosen_list,
            positions=[len(r.prompt_ids) for r in admitted],
            live=[1] * len(admitted),
            steps=[1] * len(admitted),
            seeds=[r.seed for r in admitted],
            temperatures=[effective_temperature(r.temperature) for r in admitted],
            greedy=[r.temperature <= 0 for r in admitted],
            top_ps=[r.top_p for r in admitted],
        )
        for request, token, logprob in zip(admitted, chosen_list, logprob_list):
            self._rows.append(_Row(request, [int(token)], [float(logprob)]))
        self._admitting = []
        self.stats.generated_tokens += len(admitted)
        self.stats.prefill_s += time.monotonic() - started
        self._retire([slot for slot in slots if self._finished(self._rows[slot])])

    def _reuse_candidates(self) -> list[tuple[int, Any]]:
        """Slots whose leading positions hold known tokens: running rows (prompt and fed tokens) and parked calls."""
        import numpy as np

        found = [(slot, np.asarray(row.request.prompt_ids + row.ids[:-1], dtype=np.int64)) for slot, row in enumerate(self._rows)]
        found.extend((slot, parked.tokens) for slot, parked in self._parked.items())
        return found

    def _copy_prefixes(self, copies: list[tuple[int, int, int]]) -> None:
        """Copy ``(source, target, length)`` prefixes between slots (all layers), longest length per batch."""
        assert self._cache is not None
        by_length: dict[int, list[tuple[int, int]]] = {}
        for source, target, length in copies:
            by_length.setdefault(length, []).append((source, target))
            self.stats.reused_prefix_tokens += length
        for length, pairs in by_length.items():
            self._cache.copy_slots([s for s, _ in pairs], [t for _, t in pairs], length)

    def _prefill(self, chunk: list[tuple[int, SamplingRequest, int | None, int]], logits_by_slot: dict[int, Any]) -> None:
        """One prefill pass: each row's prompt from its reused length on."""
        import torch

        assert self._cache is not None
        pieces = [request.prompt_ids[reused:] for _, request, _, reused in chunk]
        width = max(len(p) for p in pieces)
        # every row writes ``width`` positions from its start (its padding too): they must fit the slots
        reach = max(reused + width for _, _, _, reused in chunk)
        if reach > self._cache.max_capacity and len(chunk) > 1:
            for item in chunk:  # alone, a row writes only its own prompt, which fits
                self._prefill([item], logits_by_slot)
            return
        if self._cache.ensure_capacity(reach) and self._graphs is not None:
            self._graphs.invalidate_if_changed(self._storage_key())
        ids = torch.zeros((len(chunk), width), dtype=torch.long)
        for row, piece in enumerate(pieces):
            ids[row, : len(piece)] = torch.tensor(piece, dtype=torch.long)
        lengths = torch.tensor([len(p) for p in pieces])
        slot_ids = torch.tensor([slot for slot, _, _, _ in chunk])
        starts = [reused for _, _, _, reused in chunk]
        device = self._device
        with decode_attention_backends(device):
            if any(starts):
                window = max(start + width for start in starts)
                logits = self._stack.prefill(
                    self._cache, slot_ids.to(device), ids.to(device), lengths.to(device),
                    torch.tensor(starts).to(device), window,
                )
            else:
                logits = self._stack.prefill(self._cache, slot_ids.to(device), ids.to(device), lengths.to(device))
        for row, (slot, _, _, _) in enumerate(chunk):
            logits_by_slot[slot] = logits[row]
        self.stats.prefills += 1
        self.stats.prefill_tokens += int(lengths.sum())

    def _prefill_chunks(self, plan: list[tuple[int, SamplingRequest, int | None, int]]) -> list[list[tuple[int, SamplingRequest, int | None, int]]]:
        """Prefills in passes of at most ``prefill_token_budget`` padded tokens (similar lengths together)."""
        ordered = sorted(plan, key=lambda item: len(item[1].prompt_ids) - item[3])
        chunks: list[list[tuple[int, SamplingRequest, int | None, int]]] = []
        current: list[tuple[int, SamplingRequest, int | None, int]] = []
        for item in ordered:
            width = len(item[1].prompt_ids) - item[3]
            if current and (len(current) + 1) * width > self.config.prefill_token_budget:
                chunks.append(current)
                current = []
            current.append(item)
        if current:
            chunks.append(current)
        return chunks

    # --- decoding ------------------------------------------------------------------------
    def _graph_step(self, batch: int, window: int, nucleus: bool) -> None:
        """One decode step of lanes ``0 .. batch-1`` over ``window`` positions: what a graph captures."""
        assert self._cache is not None and self._lanes is not None
        lanes = self._lanes
        logits = self._stack.decode(self._cache, lanes.tokens[:batch], lanes.positions[:batch], window)
        chosen, logprobs = choose_tokens(
            logits, lanes.temperatures[:batch], lanes.greedy[:batch], lanes.top_ps[:batch],
            lanes.seeds[:batch], lanes.steps[:batch], nucleus=nucleus,
        )
        lanes.out[:batch, 0] = chosen.to(lanes.out.dtype)
        lanes.out[:batch, 1] = logprobs.to(lanes.out.dtype)
        live = lanes.live[:batch]
        lanes.tokens[:batch] = chosen
        lanes.positions[:batch] += live
        lanes.steps[:batch] += live

    def _decode_step(self) -> None:
        assert self._cache is not None and self._lanes is not None
        started = time.monotonic()
        rows = self._rows
        count = len(rows)
        needed = max(row.position for row in rows) + 1
        if self._cache.ensure_capacity(needed) and self._graphs is not None:
            self._graphs.invalidate_if_changed(self._storage_key())
        nucleus = any(r.request.top_p < 1.0 and r.request.temperature > 0 for r in rows)
        if self._graphs is not None:
            batch = bucket(count, 1, self.config.max_batch_size)
            window = bucket(needed, _WINDOW_FLOOR, self._cache.capacity)
            captures = self._graphs.captures
            self._graphs.run(batch, window, nucleus)
            self.stats.graph_replays += 1
            if self._graphs.captures != captures:
                self.stats.graph_captures = self._graphs.captures
                self.stats.graph_capture_s = self._graphs.capture_s
        else:
            window = min(-(-needed // 64) * 64, self._cache.capacity)
            self._graph_step(count, window, nucleus)
        out = self._lanes.out[:count].cpu().tolist()
        self.stats.decode_steps += 1
        self.stats.row_steps += count
        self.stats.largest_batch = max(self.stats.largest_batch, count)
        self.stats.generated_tokens += count
        finished: list[int] = []
        for slot, (row, (token, logprob)) in enumerate(zip(rows, out)):
            row.ids.append(int(token))
            row.logprobs.append(float(logprob))
            if self._finished(row):
                finished.append(slot)
        self.stats.decode_s += time.monotonic() - started
        if finished:
            self._retire(finished)

    def _finished(self, row: _Row) -> bool:
        return self._row_finished(row.request, row.ids)

    def _retire(self, slots: list[int]) -> None:
        """Answer the rows in ``slots`` and free them; the highest remaining rows move into the holes."""
        assert self._cache is not None and self._lanes is not None
        done = set(slots)
        for slot in slots:
            self._answer_row(self._rows[slot])
            self._park(slot, self._rows[slot])
        survivors = [(slot, row) for slot, row in enumerate(self._rows) if slot not in done]
        keep = len(survivors)
        holes = [slot for slot in sorted(done) if slot < keep]
        movers = [(slot, row) for slot, row in survivors if slot >= keep]
        layout: list[_Row | None] = [None] * keep
        for slot, row in survivors:
            if slot < keep:
                layout[slot] = row
        if movers:
            sources = [slot for slot, _ in movers]
            self._cache.move(sources, holes, max(row.position for _, row in movers) + 1)
            self._lanes.move_rows(sources, holes)
            for hole, (_, row) in zip(holes, movers):
                layout[hole] = row
        self._rows = [row for row in layout if row is not None]
        assert len(self._rows) == keep
        self._lanes.clear_rows(keep)

    def _park(self, slot: int, row: _Row) -> None:
        """Keep an answered row's keys and values in a prefix-cache slot (the least recently used one goes)."""
        import numpy as np

        if not self._park_slots or row.position < self.config.min_prefix_reuse:
            return
        assert self._cache is not None
        free = [s for s in self._park_slots if s not in self._parked]
        target = free[0] if free else min(self._parked, key=lambda s: self._parked[s].last_used)
        self._cache.copy_slots([slot], [target], row.position)
        self._clock += 1
        tokens = np.asarray(row.request.prompt_ids + row.ids[:-1], dtype=np.int64)
        self._parked[target] = _Parked(tokens, self._clock)

    def _answer_row(self, row: _Row) -> None:
        self.stats.requests += 1
        self._answer(row.request, row.ids, row.logprobs)


__all__ = ["ContinuousBatchingClient", "ContinuousBatchingConfig", "EngineStats"]
