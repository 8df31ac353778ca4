"""Batched sampling: concurrent ``complete`` calls from several episode threads decode together.

The episodes of a GRPO group run in threads and ask for their next turn at about the same time.
One at a time, a small model on CPU (or any model on a GPU) spends most of each step on per-call
overhead rather than arithmetic; decoding the group as one batch costs little more than one row.

:class:`BatchedEmbeddedClient` queues each call; a worker thread gathers the calls that arrive
within a short window (sliding: each arrival extends it, up to a cap), left-pads their prompts
into one batch and decodes it with a KV cache. Each row stops on its own (closed action tag, stop
string, EOS, its token cap) and leaves the batch (its cache rows are dropped), so short replies
do not pay for long ones. Calls that arrive while a batch decodes wait for the next batch.

Replies follow the :class:`~terminal_agent.models.embedded.EmbeddedModelClient` contract exactly:
``prompt_ids``, ``completion_ids`` cut on a token boundary so they decode to ``text``
(:mod:`terminal_agent.models.completion_stops`), and ``logprobs`` = ``log_softmax(logits / T)`` of
each sampled id (temperature 1 when greedy; ``top_p`` truncates what is drawn from, not the
reported values). Under greedy decoding each row's ids equal one-at-a-time decoding's (tested);
a seeded sampled row is reproducible for the same batch, but not bit-equal to its unbatched run,
since padding changes float summation order.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import Field

from terminal_agent.errors import ModelProviderError
from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.embedded import EMBEDDED_MODEL_NAME, EmbeddedModelClient
from terminal_agent.models.local_sampler_base import LocalSamplerBase, LocalSamplingSettings, SamplingRequest
from terminal_agent.models.token_logprobs import decode_attention_backends, effective_temperature, model_device

logger = logging.getLogger(__name__)



class BatchedGenerationConfig(LocalSamplingSettings):
    """Settings of the batched local sampler."""

    max_batch_size: int = Field(default=32, ge=1)
    """Most calls decoded in one batch; more wait for the next."""
    gather_window_s: float = Field(default=0.05, ge=0.0)
    """After a call arrives, wait this long for another before decoding (each arrival restarts it)."""
    max_gather_s: float = Field(default=0.25, ge=0.0)
    """Cap on the whole gathering wait, counted from the first call of the batch."""


@dataclass
class BatchStats:
    """What the worker did; read it to see that concurrent calls really were batched."""

    requests: int = 0
    """Calls answered (including failed ones)."""
    batches: int = 0
    """Batches decoded."""
    forward_calls: int = 0
    """Model forward passes (one prefill plus one per decoding step, per batch)."""
    generated_tokens: int = 0
    """Sampled tokens, summed over rows (before cuts)."""
    batch_sizes: Counter[int] = field(default_factory=Counter)
    """How many batches had each number of rows."""
    largest_batch: int = 0
    busy_s: float = 0.0
    """Wall seconds spent decoding batches (the sampler's busy time; the rest it waited for callers)."""


class BatchedEmbeddedClient(LocalSamplerBase):
    """Thread-safe :class:`~terminal_agent.interfaces.ModelClient` that batches concurrent calls.

    ``model`` is any causal LM (plain or peft-wrapped; it is used as given, so a trainer's policy
    is sampled with its current weights) on any device; ``tokenizer`` its tokenizer. Sampling
    keywords per call: ``temperature``, ``top_p``, ``max_tokens`` (or ``max_new_tokens``), ``stop``, ``seed``.
    The model is put in eval mode while a batch decodes and its previous mode restored after.
    """

    is_thread_safe = True
    """Calls from many threads are the point: they are queued and batched."""

    def __init__(self, model: Any, tokenizer: Any, config: BatchedGenerationConfig | None = None, *, name: str | None = None):
        super().__init__(model, tokenizer, config or BatchedGenerationConfig(), name or f"embedded-batched/{EMBEDDED_MODEL_NAME}")
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self._pad_id = int(pad if pad is not None else 0)
        self.stats = BatchStats()
        self._pending: list[SamplingRequest] = []
        self._cond = threading.Condition()
        self._worker: threading.Thread | None = None
        self._cache_keyword = _cache_keyword(model)

    @classmethod
    def from_embedded(
        cls, client: EmbeddedModelClient | None = None, config: BatchedGenerationConfig | None = None
    ) -> BatchedEmbeddedClient:
        """Share the model and tokenizer of an :class:`EmbeddedModelClient` (a fresh default one when ``None``).

        With no ``config``, the embedded client's token cap, temperature, top_p and stop settings carry over.
        """
        client = client or cls.default_embedded()
        return cls(client.model, client.tokenizer, config or cls.embedded_config(client, BatchedGenerationConfig))

    # --- the caller's side ----------------------------------------------------------------
    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        request = self._request(messages, sampling)
        with self._cond:
            self._pending.append(request)
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._serve, name="batched-sampler", daemon=True)
                self._worker.start()
            self._cond.notify_all()
        return request.wait()

    # --- the worker's side ----------------------------------------------------------------
    def _serve(self) -> None:
        while True:
            batch = self._gather()
            self.stats.requests += len(batch)
            try:
                self._decode(batch)
            except Exception as exc:  # noqa: BLE001 - the worker must answer every waiting caller, never die
                error = exc if isinstance(exc, ModelProviderError) else ModelProviderError(f"batched generation failed: {exc}")
                if error is not exc:
                    error.__cause__ = exc
                for request in batch:
                    if not request.done.is_set():
                        request.error = error
                        request.done.set()

    def _gather(self) -> list[SamplingRequest]:
        config = self.config
        with self._cond:
            while not self._pending:
                self._cond.wait()
            first = time.monotonic()
            while len(self._pending) < config.max_batch_size:
                now = time.monotonic()
                last_arrival = self._pending[-1].arrived
                remaining = min(last_arrival + config.gather_window_s, first + config.max_gather_s) - now
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            batch, self._pending = self._pending[: config.max_batch_size], self._pending[config.max_batch_size :]
        return batch

    def _decode(self, batch: list[SamplingRequest]) -> None:
        import torch

        started = time.monotonic()
        self.stats.batches += 1
        self.stats.batch_sizes[len(batch)] += 1
        self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
        threads_before = torch.get_num_threads()
        device = model_device(self._model)
        if device.type == "cpu":
            torch.set_num_threads(self.num_threads)  # process-wide in torch, so restored below
        was_training = self._model.training
        self._model.eval()
        try:
            with torch.inference_mode(), decode_attention_backends(device):
                last = self._decode_rows(batch, device, self._answer)
        except RuntimeError as exc:  # out of memory, bad shapes: the model failed, not the agent
            raise ModelProviderError(f"embedded model batched generation failed: {exc}") from exc
        finally:
            self._model.train(was_training)
            torch.set_num_threads(threads_before)
        self.stats.busy_s += time.monotonic() - started
        for request, ids, logprobs in last:
            self._answer(request, ids, logprobs)

    def _decode_rows(self, batch: list[SamplingRequest], device: Any,
                     on_row_done: Callable[[SamplingRequest, list[int], list[float]], None]) -> list[tuple[SamplingRequest, list[int], list[float]]]:
        """Left-padded prefill, then one KV-cached step per token; a finished row leaves the batch and is
        handed to ``on_row_done`` right away. The rows that finish on the last step are returned instead
        (the caller answers them once the batch's own bookkeeping is done)."""
        import torch

        size = len(batch)
        # Rows with the same prompt (a GRPO group's first turn) share one prefill; the cache is then
        # expanded to one row per call.
        unique: dict[tuple[int, ...], int] = {}
        row_to_unique = [unique.setdefault(tuple(r.prompt_ids), len(unique)) for r in batch]
        prompts = list(unique)
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), self._pad_id, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            input_ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
            attention[row, width - len(prompt) :] = 1
        input_ids, attention = input_ids.to(device), attention.to(device)
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        output = self._model(
            input_ids=input_ids, attention_mask=attention, position_ids=positions, use_cache=True, logits_to_keep=1
        )
        self.stats.forward_calls += 1
        cache = _output_cache(output)
        logits = output.logits[:, -1, :].float()
        if len(prompts) < size:
            index = torch.tensor(row_to_unique, device=device)
            _select_cache_rows(cache, index)
            attention, positions, logits = attention[index], positions[index], logits[index]
        temperatures = torch.tensor([effective_temperature(r.temperature) for r in batch], device=device)
        top_ps = torch.tensor([r.top_p for r in batch], device=device)
        greedy = torch.tensor([r.temperature <= 0 for r in batch], device=device)
        generators = [
            torch.Generator(device=device).manual_seed(r.seed) if r.seed is not None and r.temperature > 0 else None
            for r in batch
        ]
        ids: list[list[int]] = [[] for _ in batch]
        logprobs: list[list[float]] = [[] for _ in batch]
        active = list(range(size))  # batch rows still decoding, in cache order
        while True:
            rows = torch.tensor(active, device=device)
            chosen, chosen_logprobs = _choose_tokens(
                logits, temperatures[rows], top_ps[rows], greedy[rows], [generators[i] for i in active]
            )
            chosen_list, logprob_list = chosen.tolist(), chosen_logprobs.tolist()
            self.stats.generated_tokens += len(active)
            keep: list[int] = []  # slots (positions in ``active``) of the rows still decoding
            finished: list[int] = []  # batch rows that ended on this step
            for slot, row in enumerate(active):
                ids[row].append(chosen_list[slot])
                logprobs[row].append(logprob_list[slot])
                if self._row_finished(batch[row], ids[row]):
                    finished.append(row)
                else:
                    keep.append(slot)
            if not keep:
                return [(batch[row], ids[row], logprobs[row]) for row in finished]
            for row in finished:
                on_row_done(batch[row], ids[row], logprobs[row])
            step_ids = chosen[keep] if len(keep) < len(active) else chosen
            if len(keep) < len(active):
                index = torch.tensor(keep, device=device)
                _select_cache_rows(cache, index)
                attention, positions = attention[index], positions[index]
                active = [active[slot] for slot in keep]
            attention = torch.cat([attention, attention.new_ones((len(active), 1))], dim=-1)
            positions = positions[:, -1:] + 1
            output = self._model(
                input_ids=step_ids[:, None],
                attention_mask=attention,
                position_ids=positions,
                use_cache=True,
                **{self._cache_keyword: cache},
            )
            self.stats.forward_calls += 1
            cache = _output_cache(output)
            logits = output.logits[:, -1, :].float()


def _cache_keyword(model: Any) -> str:
    """The forward keyword of the KV cache: ``cache`` in newer transformers, ``past_key_values`` before."""
    import inspect

    base = model.get_base_model() if hasattr(model, "get_base_model") else model  # peft wraps forward in **kwargs
    parameters = inspect.signature(base.forward).parameters
    return "cache" if "cache" in parameters and "past_key_values" not in parameters else "past_key_values"


def _select_cache_rows(cache: Any, index: Any) -> None:
    """Keep (or repeat) the cache rows ``index``, in place."""
    if hasattr(cache, "batch_select_indices"):
        cache.batch_select_indices(index)
        return
    for layer in cache.layers:  # transformers versions whose cache lacks the helper
        layer.keys, layer.values = layer.keys[index], layer.values[index]


def _output_cache(output: Any) -> Any:
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def _choose_tokens(logits: Any, temperatures: Any, top_ps: Any, greedy: Any, generators: list[Any]) -> tuple[Any, Any]:
    """Next token per row (argmax where greedy, else a temperature + top-p draw) and its logprob
    under ``log_softmax(logits / T)`` (T = 1 for greedy rows)."""
    import torch

    log_probs = torch.log_softmax(logits / temperatures[:, None], dim=-1)
    chosen = logits.argmax(dim=-1)
    if not bool(greedy.all()):
        weights = log_probs.exp()
        order = None
        if bool((top_ps < 1.0).any()):  # nucleus: zero the tail beyond each row's mass (a sort, so only when asked)
            weights, order = weights.sort(dim=-1, descending=True)
            mass_before = weights.cumsum(dim=-1) - weights
            weights = weights.masked_fill(mass_before >= top_ps[:, None], 0.0)  # keeps the top token always
        if all(g is None for g in generators):
            drawn = torch.multinomial(weights, 1)[:, 0]
        else:
            drawn = torch.cat([torch.multinomial(weights[row], 1, generator=generators[row]) for row in range(len(generators))])
        sampled = drawn if order is None else order.gather(-1, drawn[:, None])[:, 0]
        chosen = torch.where(greedy, chosen, sampled)
    return chosen, log_probs.gather(-1, chosen[:, None])[:, 0]
