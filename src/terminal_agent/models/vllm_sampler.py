"""Sampling the local trainer's policy through vLLM's offline engine, where vLLM is installed.

:class:`VLLMSamplerClient` is a thread-safe :class:`~terminal_agent.interfaces.ModelClient` with the
contract of the project's own samplers (:class:`~terminal_agent.models.local_sampler_base.LocalSamplerBase`
renders the chat, applies the stop rules and cuts the reply): ``prompt_ids``, ``completion_ids`` cut on
a token boundary so they decode to ``text``, ``logprobs`` of each sampled id, ``finish_reason``.

- **One engine, driven step by step.** A ``vllm.LLM`` is built in this process (its engine core runs
  in vLLM's own child process, as vLLM does by default, so vLLM's compile, CUDA graphs and
  distributed state stay out of the trainer's interpreter and its GPU memory is freed on
  :meth:`close`). One worker thread owns the engine: it adds every waiting call as a request
  and calls ``llm.llm_engine.step()``, so a call that arrives while others decode joins the
  running batch at the next step (vLLM's continuous batching), exactly as ``LLM.generate`` runs
  its own loop, but with requests added between steps.
- **The project's stop rules, exactly.** Requests stream their new tokens every step
  (``RequestOutputKind.DELTA``). A row ends at EOS (vLLM's ``stop_token_ids``), at its token cap
  (``max_tokens``), or where :meth:`LocalSamplerBase._row_finished` says (a closed action tag, a stop
  string): the worker then aborts the request in the engine and answers at once. Tokens vLLM
  sampled after that point are ignored. (``LLM.generate`` would return only whole replies, and
  vLLM's own stop strings cannot say "a tag opened in the reply is closed".)
- **Logprobs.** The engine runs with ``logprobs_mode="processed_logprobs"`` and each request asks
  ``logprobs=0``: the sampled token's logprob is ``log_softmax(logits / T)`` (T = 1 when greedy),
  the trainer's definition. With ``top_p < 1`` vLLM reports it over the nucleus (renormalised),
  where the project's samplers report it over the full distribution; the trainer samples at 1.
- **Weights.** vLLM loads the base weights from the model directory. The trainer trains a LoRA
  adapter on its own torch model; whenever the engine is idle and the adapter's parameters have
  changed (their version counters, bumped by every in-place optimizer step or adapter load), the
  adapter is saved to a temporary directory and loaded as a new ``LoRARequest`` with a new id;
  the previous one is removed. Calls made while the peft adapter is disabled
  (``with model.disable_adapter():``) sample the base model. Full fine-tuning cannot be carried
  over: trainable weights other than LoRA's are refused when the client is built, and a change of
  the base weights fails the next call.

vLLM is imported only when a client is built; :func:`require_vllm` says, as a ``ConfigError``
naming the setting, what to install when it is missing.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pydantic import Field

from terminal_agent.errors import ConfigError, ModelProviderError
from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.base import ContextWindowExceededError
from terminal_agent.models.local_sampler_base import LocalSamplerBase, LocalSamplingSettings, SamplingRequest

logger = logging.getLogger(__name__)

VLLM_PIN = "vllm==0.24.0"
"""The vLLM release the project's ``[train]`` extra resolves (verl 0.9.1's ``[vllm]`` pin; torch 2.11, CUDA 13)."""

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""``max_lora_rank`` values vLLM accepts; the client picks the smallest that holds the adapter's rank."""


def vllm_installed() -> bool:
    """Whether ``vllm`` can be imported here (looked up without importing it: the import takes seconds)."""
    return importlib.util.find_spec("vllm") is not None


def require_vllm(key: str = "local.sampler") -> None:
    """Raise :class:`ConfigError` naming ``key`` and what to install when vLLM is not installed."""
    if not vllm_installed():
        raise ConfigError(
            f"{key}: 'vllm' samples through vLLM, which is not installed in this environment; install it with "
            f"`pip install {VLLM_PIN}` (or the project's `[train]` extra) on a CUDA machine, or use {key}=auto "
            "(the project's own sampler, which also runs on CPU)"
        )


def vllm_lora_rank(rank: int) -> int:
    """The smallest ``max_lora_rank`` vLLM accepts that holds an adapter of ``rank``."""
    for allowed in VLLM_LORA_RANKS:
        if allowed >= rank:
            return allowed
    raise ConfigError(f"LoRA rank {rank} is above vLLM's largest max_lora_rank ({VLLM_LORA_RANKS[-1]})")


class VLLMSamplerConfig(LocalSamplingSettings):
    """Settings of the vLLM sampler (``num_threads`` is not used: vLLM runs on the GPU)."""

    max_batch_size: int = Field(default=64, ge=1)
    """vLLM's ``max_num_seqs``: the most calls decoding at once (more wait in vLLM's queue)."""
    gpu_memory_utilization: float = Field(default=0.3, gt=0.0, le=1.0)
    """Share of the GPU's memory vLLM takes (weights, KV cache, graphs); the rest stays for the trainer's
    torch model, its activations and optimizer state on the same GPU."""
    max_model_len: int | None = Field(default=None, ge=16)
    """Longest prompt + reply; ``None``: vLLM's default (the model's context length)."""
    enforce_eager: bool = False
    """Skip torch.compile and CUDA graphs (faster start, slower decoding)."""
    max_lora_rank: int | None = Field(default=None, ge=1)
    """vLLM's ``max_lora_rank``; ``None``: the smallest vLLM accepts that holds the policy's adapter."""
    ignore_eos: bool = False
    """Benchmarks only: rows run on past EOS to their token cap (equal lengths for every method)."""
    seed: int = 0
    """vLLM's engine seed: the random draws of rows without a seed of their own."""
    call_seeds: bool = False
    """Give a call's ``seed`` to vLLM (a generator of its own per row). Off by default: vLLM draws seeded rows
    one at a time (slow at 64 rows), and its replies depend on which rows share a step (batch-dependent
    kernels), so a seed would not make a reply repeatable inside a trainer's changing batches anyway."""
    adapter_dir: Path | None = None
    """Where adapters are saved for vLLM to load; ``None``: a temporary directory removed on close."""
    engine_kwargs: dict[str, Any] = Field(default_factory=dict)
    """More keywords for ``vllm.LLM`` (they override the ones the client sets)."""


@dataclass
class VLLMSamplerStats:
    """What the worker did (the trainer's ``sampler/*`` metrics read ``busy_s``, ``generated_tokens``,
    ``decode_steps`` and ``row_steps``)."""

    requests: int = 0
    """Calls answered (including failed ones)."""
    generated_tokens: int = 0
    """Tokens received from the engine, before cuts."""
    decode_steps: int = 0
    """Engine steps that returned tokens."""
    row_steps: int = 0
    """Rows that got tokens, summed over those steps (``row_steps / decode_steps`` is the mean batch)."""
    largest_batch: int = 0
    busy_s: float = 0.0
    """Wall seconds with at least one row in the engine."""
    stopped_by_rule: int = 0
    """Rows ended by the project's stop rules (closed action tag, stop string) and aborted in the engine."""
    adapter_syncs: int = 0
    """Adapters saved and loaded into vLLM (one per weight change seen)."""
    adapter_sync_s: float = 0.0


class PolicyWeights:
    """What the sampler carries from the trainer's torch model into vLLM: its LoRA adapter.

    ``model`` is a peft-wrapped causal LM, a plain one (sampled as the directory's base weights),
    or ``None``. :meth:`adapter_key` changes whenever the adapter's weights do.
    """

    def __init__(self, model: Any):
        self.model = model
        self.is_peft = model is not None and hasattr(model, "peft_config") and hasattr(model, "save_pretrained")
        named = list(model.named_parameters()) if model is not None else []
        self._lora = [p for name, p in named if "lora_" in name] if self.is_peft else []
        self._base = [p for name, p in named if not (self.is_peft and "lora_" in name)]
        self._lora_layers = [m for m in (model.modules() if self.is_peft else []) if hasattr(m, "lora_A")]
        if self.is_peft:
            others = [name for name, p in named if p.requires_grad and "lora_" not in name]
            if others:
                raise ConfigError(
                    f"the vLLM sampler carries only LoRA adapters into vLLM, but the policy also trains {others[0]!r} "
                    f"(and {len(others) - 1} more): full fine-tuning needs local.sampler=auto"
                )
        self._base_versions = self._versions(self._base)

    @staticmethod
    def _versions(params: list[Any]) -> tuple[int, ...]:
        return tuple(p._version for p in params)

    @property
    def lora_rank(self) -> int | None:
        """The adapter's largest rank (``rank_pattern`` included), ``None`` without an adapter."""
        if not self.is_peft:
            return None
        ranks = []
        for settings in self.model.peft_config.values():
            ranks.append(int(settings.r))
            ranks.extend(int(r) for r in (getattr(settings, "rank_pattern", None) or {}).values())
        return max(ranks)

    def adapter_enabled(self) -> bool:
        return self.is_peft and not any(getattr(layer, "disable_adapters", False) for layer in self._lora_layers)

    def adapter_key(self) -> tuple[int, ...] | None:
        """``None`` when the base model is to be sampled (no adapter, or adapter disabled); otherwise the
        adapter's version counters. Raises :class:`ModelProviderError` once the base weights changed."""
        if self._versions(self._base) != self._base_versions:
            raise ModelProviderError(
                "the policy's base weights changed (full fine-tuning or a merged adapter): the vLLM sampler loads "
                "the base weights from the model directory and carries only LoRA adapters; use local.sampler=auto"
            )
        if not self.adapter_enabled():
            return None
        return self._versions(self._lora)

    def save_adapter(self, directory: Path) -> None:
        """The adapter in peft's layout (``adapter_config.json`` and ``adapter_model.safetensors``)."""
        self.model.save_pretrained(str(directory))


def _vllm_api() -> Any:
    """The vLLM names the client uses (imported here, not at module import)."""
    from vllm import LLM, SamplingParams
    from vllm.lora.request import LoRARequest
    from vllm.sampling_params import RequestOutputKind

    return SimpleNamespace(LLM=LLM, SamplingParams=SamplingParams, LoRARequest=LoRARequest,
                           RequestOutputKind=RequestOutputKind)


def _dtype_name(model: Any, default: str = "bfloat16") -> str:
    try:
        return str(next(model.parameters()).dtype).removeprefix("torch.")
    except (AttributeError, StopIteration, TypeError):
        return default


@dataclass
class _Row:
    """A request in the engine: what it sampled so far."""

    request: SamplingRequest
    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)


class VLLMSamplerClient(LocalSamplerBase):
    """Thread-safe :class:`~terminal_agent.interfaces.ModelClient` over ``vllm.LLM``; see the module docstring.

    ``model`` is the trainer's torch model (peft-wrapped: its adapter is carried over; plain or ``None``:
    the directory's base weights), ``tokenizer`` its tokenizer, ``model_dir`` the transformers directory
    vLLM loads the base weights from (the one the model was loaded from). ``vllm_api`` replaces the vLLM
    names the client uses (``LLM``, ``SamplingParams``, ``LoRARequest``, ``RequestOutputKind``): tests
    pass stand-ins. Building the client starts the engine (tens of seconds: weights, compile, graphs).
    """

    is_thread_safe = True
    """Calls from many threads share the running batch."""

    def __init__(self, model: Any, tokenizer: Any, model_dir: str | Path, config: VLLMSamplerConfig | None = None,
                 *, name: str | None = None, vllm_api: Any = None):
        config = config or VLLMSamplerConfig()
        self.model_dir = Path(model_dir)
        super().__init__(model if model is not None else _generation_config_holder(self.model_dir), tokenizer, config,
                         name or f"vllm/{self.model_dir.name}")
        self._weights = PolicyWeights(model)  # refuses trainable non-LoRA weights before vLLM starts
        if config.ignore_eos:
            self._eos_ids = set()
        self._api = vllm_api or _vllm_api()
        self.stats = VLLMSamplerStats()
        self._cond = threading.Condition()
        self._pending: list[SamplingRequest] = []
        self._rows: dict[str, _Row] = {}
        self._worker: threading.Thread | None = None
        self._closed = False
        self._broken: ModelProviderError | None = None
        self._busy_since: float | None = None
        self._next_request = 0
        self._lora: Any = None
        """The ``LoRARequest`` new requests use (``None``: the base weights)."""
        self._loaded: Any = None
        """The adapter loaded in vLLM, its weights' version counters and its directory."""
        self._loaded_key: tuple[int, ...] | None = None
        self._loaded_dir: Path | None = None
        self._warned_top_p = False
        self._adapter_root = Path(tempfile.mkdtemp(prefix="vllm-adapters-", dir=config.adapter_dir))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self._adapter_root), True)
        self._llm = self._start_engine(model)
        model_config = getattr(self._llm, "model_config", None)
        self.max_model_len = int(getattr(model_config, "max_model_len", None) or config.max_model_len or 8192)

    def _start_engine(self, model: Any) -> Any:
        config = self.config
        kwargs: dict[str, Any] = {
            "model": str(self.model_dir),
            "dtype": _dtype_name(model),
            "gpu_memory_utilization": config.gpu_memory_utilization,
            "enforce_eager": config.enforce_eager,
            "max_num_seqs": config.max_batch_size,
            "seed": config.seed,
            "skip_tokenizer_init": True,  # the client renders prompts and decodes replies itself
            "logprobs_mode": "processed_logprobs",  # log_softmax(logits / T), the trainer's logprobs
        }
        if config.max_model_len is not None:
            kwargs["max_model_len"] = config.max_model_len
        rank = self._weights.lora_rank
        if rank is not None:
            kwargs.update(enable_lora=True, max_lora_rank=config.max_lora_rank or vllm_lora_rank(rank), max_loras=1,
                          max_cpu_loras=2)
        kwargs.update(config.engine_kwargs)
        started = time.monotonic()
        try:
            llm = self._api.LLM(**kwargs)
        except Exception as exc:  # noqa: BLE001 - any engine start failure is the sampler's provider error
            self._cleanup()
            raise ModelProviderError(f"vLLM could not start on {self.model_dir}: {type(exc).__name__}: {exc}") from exc
        logger.info("vLLM engine on %s started in %.1f s (%s)", self.model_dir.name, time.monotonic() - started,
                    ", ".join(f"{k}={v}" for k, v in kwargs.items() if k != "model"))
        return llm

    # --- the caller's side ----------------------------------------------------------------
    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        request = self._request(messages, sampling)
        if len(request.prompt_ids) >= self.max_model_len:
            raise ContextWindowExceededError(
                f"prompt of {len(request.prompt_ids)} tokens does not fit vLLM's {self.max_model_len}-token context"
            )
        request.max_new_tokens = min(request.max_new_tokens, self.max_model_len - len(request.prompt_ids))
        with self._cond:
            if self._closed:
                raise ModelProviderError("the vLLM sampler is closed")
            if self._broken is not None:
                raise self._broken
            self._pending.append(request)
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._serve, name="vllm-sampler", daemon=True)
                self._worker.start()
            self._cond.notify_all()
        return request.wait()

    def close(self) -> None:
        """Answer the running and waiting calls, stop the worker and the engine (its GPU memory is freed),
        remove the saved adapters. Later calls fail. Idempotent."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout=120)
        llm, self._llm = self._llm, None
        if llm is not None:
            core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
            try:
                if core is not None:
                    core.shutdown()
            except Exception as exc:  # noqa: BLE001 - closing must not fail; the process exit frees the rest
                logger.warning("vLLM engine shutdown raised %s", exc)
        self._cleanup()

    # --- the worker's side ----------------------------------------------------------------
    def _serve(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._rows:
                    if self._closed:
                        return
                    self._cond.wait()
                admitted, self._pending = self._pending, []
            try:
                if admitted:
                    if self._busy_since is None:
                        self._busy_since = time.monotonic()
                    if not self._rows:  # weights are synced between batches, never under running rows
                        self._sync_adapter()
                    self._add(admitted)
                if self._rows:
                    self._step()
            except BaseException as exc:  # noqa: BLE001 - every waiting caller gets the error; the worker goes on
                self._fail_all(exc, admitted)
                if not isinstance(exc, Exception):
                    raise
            finally:
                self._credit_busy()

    @property
    def _engine(self) -> Any:
        if self._llm is None:
            raise ModelProviderError("the vLLM sampler is closed")
        return self._llm.llm_engine

    def _sync_adapter(self) -> None:
        """Point new requests at the policy's current adapter: none while it is disabled (or absent); the
        loaded one while its weights are unchanged; otherwise save it, load it as a new ``LoRARequest``
        and remove the previous one."""
        key = self._weights.adapter_key()
        if key is None:
            self._lora = None
            return
        if self._loaded is not None and key == self._loaded_key:
            self._lora = self._loaded
            return
        started = time.monotonic()
        number = self.stats.adapter_syncs + 1
        directory = self._adapter_root / f"adapter-{number}"
        self._weights.save_adapter(directory)
        lora = self._api.LoRARequest(f"{self.name}-adapter-{number}", number, str(directory))
        self._engine.add_lora(lora)  # loads it now: a bad adapter fails here, not inside a step
        previous, previous_dir = self._loaded, self._loaded_dir
        self._loaded, self._loaded_key, self._loaded_dir, self._lora = lora, key, directory, lora
        if previous is not None:
            self._engine.remove_lora(previous.lora_int_id)
            if previous_dir is not None:  # set together with the adapter
                shutil.rmtree(previous_dir, ignore_errors=True)
        self.stats.adapter_syncs += 1
        self.stats.adapter_sync_s += time.monotonic() - started
        logger.debug("vLLM sampler: adapter %d loaded in %.2f s", number, time.monotonic() - started)

    def _sampling_params(self, request: SamplingRequest) -> Any:
        api, config = self._api, self.config
        sampled = request.temperature > 0
        if sampled and request.top_p < 1.0 and not self._warned_top_p:
            self._warned_top_p = True
            logger.warning("vLLM sampler: with top_p < 1 the logprobs are over the nucleus (vLLM's processed "
                           "logprobs), not the full distribution the project's samplers report")
        return api.SamplingParams(
            temperature=request.temperature if sampled else 0.0,
            top_p=request.top_p if sampled else 1.0,
            max_tokens=request.max_new_tokens,
            seed=request.seed if sampled and config.call_seeds else None,
            logprobs=0,  # the sampled token's logprob only
            ignore_eos=config.ignore_eos,
            stop_token_ids=[] if config.ignore_eos else sorted(self._eos_ids),
            detokenize=False,
            output_kind=api.RequestOutputKind.DELTA,  # each step's new tokens: the stop rules run per token
        )

    def _engine_input(self, prompt_ids: list[int]) -> Any:
        prompt = {"prompt_token_ids": list(prompt_ids)}
        render = getattr(self._llm, "_preprocess_cmpl_one", None)  # what LLM.generate does with a prompt (vLLM 0.2x)
        return render(prompt) if callable(render) else prompt

    def _add(self, admitted: list[SamplingRequest]) -> None:
        engine = self._engine
        for request in admitted:
            request_id = str(self._next_request)
            self._next_request += 1
            try:
                engine.add_request(request_id, self._engine_input(request.prompt_ids), self._sampling_params(request),
                                   lora_request=self._lora)
            except (ValueError, TypeError) as exc:  # vLLM refused this request (its prompt, its settings)
                self._finish_with_error(request, ModelProviderError(f"vLLM refused the request: {exc}"))
                continue
            self._rows[request_id] = _Row(request)

    def _step(self) -> None:
        engine = self._engine
        if not engine.has_unfinished_requests():  # nothing would ever come back for these rows
            raise ModelProviderError(f"vLLM lost {len(self._rows)} running requests")
        outputs = engine.step()
        rows_with_tokens = 0
        aborted: list[str] = []
        for output in outputs:
            row = self._rows.get(output.request_id)
            if row is None:  # a request already answered (its late tokens after an abort)
                continue
            completion = output.outputs[0]
            tokens = list(completion.token_ids)
            if tokens:
                rows_with_tokens += 1
                self.stats.generated_tokens += len(tokens)
            ended = False
            for index, token in enumerate(tokens):
                row.ids.append(int(token))
                row.logprobs.append(_sampled_logprob(completion.logprobs, index, int(token)))
                if self._row_finished(row.request, row.ids):
                    ended = True
                    break
            if not ended and not output.finished:
                continue
            del self._rows[output.request_id]
            if not output.finished:
                aborted.append(output.request_id)
                self.stats.stopped_by_rule += 1
            reason = getattr(completion, "finish_reason", None)
            if not ended and reason not in ("stop", "length"):
                self._finish_with_error(row.request, ModelProviderError(f"vLLM ended the request: {reason}"))
                continue
            self.stats.requests += 1
            self._answer(row.request, row.ids, row.logprobs)
        if aborted:
            engine.abort_request(aborted)
        if rows_with_tokens:
            self.stats.decode_steps += 1
            self.stats.row_steps += rows_with_tokens
            self.stats.largest_batch = max(self.stats.largest_batch, rows_with_tokens)

    def _credit_busy(self) -> None:
        """Add the busy time so far (credited every step, so stats read mid-run are current)."""
        if self._busy_since is not None:
            now = time.monotonic()
            self.stats.busy_s += now - self._busy_since
            self._busy_since = now if self._rows else None

    def _finish_with_error(self, request: SamplingRequest, error: BaseException) -> None:
        self.stats.requests += 1
        request.error = error
        request.done.set()

    def _fail_all(self, exc: BaseException, admitted: list[SamplingRequest]) -> None:
        error = (exc if isinstance(exc, ModelProviderError)
                 else ModelProviderError(f"vLLM sampling failed: {type(exc).__name__}: {exc}"))
        if error is not exc:
            error.__cause__ = exc
        rows, self._rows = self._rows, {}
        with self._cond:
            waiting, self._pending = self._pending, []
            if type(exc).__name__ == "EngineDeadError" or self._llm is None:
                self._broken = error  # the engine is gone: later calls fail at once
        if rows and self._llm is not None:
            try:
                self._llm.llm_engine.abort_request(list(rows))
            except Exception:  # noqa: BLE001 - the engine may be the thing that failed
                pass
        for request in [row.request for row in rows.values()] + admitted + waiting:
            if not request.done.is_set():
                self._finish_with_error(request, error)
        logger.warning("vLLM sampler failed; %d calls answered with the error: %s", len(rows) + len(waiting), exc)


def _sampled_logprob(logprobs: Any, index: int, token: int) -> float:
    """The sampled token's logprob at ``index`` of a step's logprobs (``logprobs[i][token].logprob``)."""
    if not logprobs or index >= len(logprobs) or logprobs[index] is None:
        raise ModelProviderError("vLLM returned no logprob for a sampled token (the request asked logprobs=0)")
    return float(logprobs[index][token].logprob)


def _generation_config_holder(model_dir: Path) -> Any:
    """A stand-in for the torch model when there is none: only its ``generation_config`` (EOS ids) is read."""
    try:
        from transformers import GenerationConfig

        return SimpleNamespace(generation_config=GenerationConfig.from_pretrained(model_dir))
    except (OSError, ValueError):
        return SimpleNamespace(generation_config=None)


def vllm_client_for_directory(model_dir: str | Path, config: VLLMSamplerConfig | None = None, *,
                              name: str | None = None) -> VLLMSamplerClient:
    """A vLLM client on a transformers directory's own weights (no torch model, no adapter)."""
    from transformers import AutoTokenizer

    require_vllm("model client 'vllm'")
    return VLLMSamplerClient(None, AutoTokenizer.from_pretrained(model_dir), model_dir, config, name=name)


__all__ = [
    "PolicyWeights", "VLLMSamplerClient", "VLLMSamplerConfig", "VLLMSamplerStats", "VLLM_PIN", "require_vllm",
    "vllm_client_for_directory", "vllm_installed", "vllm_lora_rank",
]
