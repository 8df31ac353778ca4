"""What the two local samplers share: reading a call's sampling keywords, rendering the chat,
deciding when a row is done and turning its sampled ids into a :class:`ModelResponse`.

:class:`LocalSamplerBase` is the base of :class:`~terminal_agent.models.batched_generation.BatchedEmbeddedClient`
and :class:`~terminal_agent.models.continuous_batching.ContinuousBatchingClient`; each adds its own
worker. Replies follow the :class:`~terminal_agent.models.embedded.EmbeddedModelClient` contract
(see :mod:`terminal_agent.models.completion_stops` for where a reply is cut).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any


from terminal_agent.errors import ModelProviderError
from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.completion_stops import StopRule, cut_completion
from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig, encode_chat, eos_token_ids
from terminal_agent.models.sampling_settings import SamplingSettings

logger = logging.getLogger(__name__)

SAMPLING_KEYWORDS = frozenset({"temperature", "top_p", "max_tokens", "max_new_tokens", "stop", "seed"})
"""Keywords of ``complete`` the local samplers read; others are ignored (logged at debug level)."""

CARRIED_FROM_EMBEDDED = tuple(SamplingSettings.model_fields)
"""Settings of an :class:`EmbeddedModelConfig` that ``from_embedded`` carries over into a sampler's config: every
field of the shared :class:`SamplingSettings`."""


class LocalSamplingSettings(SamplingSettings):
    """Per-reply settings shared by the local samplers' configs (a call's keywords override them); declared once in
    :class:`~terminal_agent.models.sampling_settings.SamplingSettings`, which the embedded model's config extends too."""


@dataclass
class SamplingRequest:
    """One waiting call: its prompt, its sampling settings and, once answered, its reply or error."""

    prompt_ids: list[int]
    temperature: float
    top_p: float
    max_new_tokens: int
    rule: StopRule
    seed: int | None
    arrived: float
    done: threading.Event = field(default_factory=threading.Event)
    response: ModelResponse | None = None
    error: BaseException | None = None

    def wait(self) -> ModelResponse:
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.response is not None
        return self.response


class LocalSamplerBase:
    """Model, tokenizer and the per-call rules of a local sampler (``config`` has the
    ``max_new_tokens`` / ``temperature`` / ``top_p`` / ``stop_after_action`` / ``action_tags`` /
    ``num_threads`` fields)."""

    config: Any

    def __init__(self, model: Any, tokenizer: Any, config: Any, name: str):
        self.config = config
        self.name = name
        self._model = model
        self._tokenizer = tokenizer
        self._eos_ids = eos_token_ids(model, tokenizer)
        self.num_threads = config.num_threads or max(1, (os.cpu_count() or 2) // 2)
        self._closes_tag: dict[int, bool] = {}

    @classmethod
    def embedded_config(cls, client: EmbeddedModelClient, config_type: type) -> Any:
        """``config_type`` with the embedded client's token cap, temperature, top_p, stop and thread settings."""
        return config_type(**{key: getattr(client.config, key) for key in CARRIED_FROM_EMBEDDED})

    @staticmethod
    def default_embedded() -> EmbeddedModelClient:
        return EmbeddedModelClient(EmbeddedModelConfig())

    @property
    def model(self) -> Any:
        """The model sampled from (used as given: a trainer's policy is sampled with its current weights)."""
        return self._model

    @property
    def tokenizer(self) -> Any:
        return self._tokenizer

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        return len(encode_chat(self._tokenizer, messages))

    def _request(self, messages: list[dict[str, str]], sampling: dict[str, Any]) -> SamplingRequest:
        """The call as a request (raises :class:`ModelProviderError` when the chat cannot be rendered)."""
        unknown = set(sampling) - SAMPLING_KEYWORDS
        if unknown:
            logger.debug("%s ignores sampling keys %s", self.name, sorted(unknown))
        try:
            prompt_ids = encode_chat(self._tokenizer, messages)
        except Exception as exc:  # noqa: BLE001 - a template failure is the caller's malformed chat
            raise ModelProviderError(f"embedded model could not render the chat: {exc}") from exc
        config = self.config
        return SamplingRequest(
            prompt_ids=prompt_ids,
            temperature=float(sampling.get("temperature", config.temperature) or 0.0),
            top_p=float(sampling.get("top_p", config.top_p) or 1.0),
            max_new_tokens=int(sampling.get("max_tokens") or sampling.get("max_new_tokens") or config.max_new_tokens),
            rule=StopRule.build(config.stop_after_action, config.action_tags, sampling.get("stop")),
            seed=None if sampling.get("seed") is None else int(sampling["seed"]),
            arrived=time.monotonic(),
        )

    def _decode_text(self, ids: Any) -> str:
        text: str = self._tokenizer.decode(list(ids), skip_special_tokens=True)  # one sequence: one str
        return text

    def _row_finished(self, request: SamplingRequest, ids: list[int]) -> bool:
        """EOS, the token cap, a closed action tag or a stop string ends the row at its last sampled id."""
        if ids[-1] in self._eos_ids or len(ids) >= request.max_new_tokens:
            return True
        rule = request.rule
        if not rule.stop and not (rule.stop_after_action and self._may_close_tag(ids[-1])):
            return False  # a closed tag ends with '>'; only stop strings need every step's text
        return rule.is_hit(self._decode_text(ids))

    def _may_close_tag(self, token: int) -> bool:
        known = self._closes_tag.get(token)
        if known is None:
            known = self._closes_tag[token] = ">" in self._decode_text([token])
        return known

    def _answer(self, request: SamplingRequest, ids: list[int], logprobs: list[float]) -> None:
        """Cut the row's ids at its stop and hand the reply to the waiting caller."""
        cut = cut_completion(ids, self._decode_text, request.rule, self._eos_ids, request.max_new_tokens)
        request.response = ModelResponse(
            text=cut.text,
            finish_reason=cut.finish_reason,
            prompt_tokens=len(request.prompt_ids),
            completion_tokens=cut.kept,
            latency_s=time.monotonic() - request.arrived,
            prompt_ids=list(request.prompt_ids),
            completion_ids=ids[: cut.kept],
            logprobs=logprobs[: cut.kept],
        )
        request.done.set()


__all__ = ["CARRIED_FROM_EMBEDDED", "LocalSamplerBase", "LocalSamplingSettings", "SAMPLING_KEYWORDS", "SamplingRequest"]
