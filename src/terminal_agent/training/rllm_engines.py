"""Bridges between rLLM's rollout engines and our model clients, in both directions.

* :class:`RolloutEngineModelClient` - an rLLM ``RolloutEngine`` (vLLM through verl in training) seen as
  our synchronous :class:`~terminal_agent.interfaces.ModelClient`, so that the one episode loop
  (:func:`terminal_agent.rollout.episode.run_episode`) drives rLLM's training rollouts too. It is
  called from a worker thread and hands each request to the event loop that owns the engine.
* :class:`ModelClientRolloutEngine` - any of our clients (the scripted one, the embedded model, a
  litellm endpoint) seen as an rLLM ``RolloutEngine``: rLLM's own engines (v0.2.1's
  ``AgentExecutionEngine``, HEAD's ``AgentWorkflowEngine``) then run against it. Clients that give
  no token ids get them from a tokenizer's chat template, the way a vLLM server would report them.

Needs rllm (``pip install "rllm @ git+..."``, see docs/training.md).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any

from terminal_agent.compat.rllm import RLLM_AVAILABLE
from terminal_agent.errors import ConfigError, ModelProviderError
from terminal_agent.interfaces import ModelClient, ModelResponse
from terminal_agent.models.base import ContextWindowExceededError

if not RLLM_AVAILABLE:  # ModuleNotFoundError naming rllm: callers tell "rLLM missing" from a broken install
    raise ModuleNotFoundError(
        "terminal_agent.training.rllm_engines needs rLLM: "
        'pip install "rllm @ git+https://github.com/rllm-org/rllm@9beb6e0f676a46d38858991fd79ac5f8e0b16d4c" (see docs/rllm.md)',
        name="rllm",
    )

from rllm.engine.rollout.rollout_engine import ModelOutput, RolloutEngine  # noqa: E402
from rllm.workflows.workflow import TerminationEvent, TerminationReason  # noqa: E402

logger = logging.getLogger(__name__)

ENGINE_ONLY_KEYS = ("application_id", "enforce_max_prompt_length", "validate", "meta_info")
"""Keywords rLLM's engines pass along that a plain model client does not take."""


def model_output_to_response(output: Any) -> ModelResponse:
    """An rLLM ``ModelOutput`` as our ``ModelResponse`` (token ids and logprobs kept)."""
    text = output.text if output.text is not None else (output.content or "")
    prompt_ids = list(output.prompt_ids) if output.prompt_ids is not None else None
    completion_ids = list(output.completion_ids) if output.completion_ids is not None else None
    return ModelResponse(
        text=text,
        finish_reason=output.finish_reason or "stop",
        prompt_tokens=len(prompt_ids) if prompt_ids is not None else int(output.prompt_length or 0),
        completion_tokens=len(completion_ids) if completion_ids is not None else int(output.completion_length or 0),
        prompt_ids=prompt_ids,
        completion_ids=completion_ids,
        logprobs=list(output.logprobs) if output.logprobs is not None else None,
    )


class RolloutEngineModelClient:
    """A ``ModelClient`` over an rLLM rollout engine owned by ``loop`` (call ``complete`` from another thread).

    ``outputs`` keeps every ``ModelOutput`` in call order: the workflow puts them on rLLM's steps
    (``step.model_output``), which is what rLLM's verl transform trains on.

    Every rLLM engine ends the episode (``TerminationEvent(MAX_PROMPT_LENGTH_EXCEEDED)``) when a
    turn's whole prompt passes ``data.max_prompt_length`` unless told not to; that cap is sized for
    the first prompt, so a multi-turn episode would be cut a few turns in. The client passes
    ``enforce_max_prompt_length=False`` (the context is bounded by ``max_context_tokens`` and the
    server's ``max_model_len``) and turns that event, if an engine still raises it, into our
    :class:`~terminal_agent.models.base.ContextWindowExceededError`: the episode is then cut and
    graded like any other context overflow, not lost as a provider failure.
    """

    is_thread_safe = True

    def __init__(
        self,
        engine: Any,
        loop: asyncio.AbstractEventLoop,
        *,
        timeout_s: float | None = None,
        **engine_kwargs: Any,
    ) -> None:
        self.name = f"rllm/{type(engine).__name__}"
        self.engine = engine
        self.loop = loop
        self.timeout_s = timeout_s
        self.engine_kwargs = {"enforce_max_prompt_length": False, **engine_kwargs}
        self.outputs: list[Any] = []
        self._lock = threading.Lock()

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        if threading.get_ident() == getattr(self.loop, "_thread_id", None):  # would deadlock: the loop waits on us
            raise RuntimeError("RolloutEngineModelClient.complete() must not run on the engine's event loop thread")
        future = asyncio.run_coroutine_threadsafe(
            self.engine.get_model_response(messages, **{**self.engine_kwargs, **sampling}), self.loop
        )
        try:
            output = future.result(self.timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ModelProviderError(f"rollout engine gave no reply within {self.timeout_s} s") from None
        except TerminationEvent as event:
            if event.reason is TerminationReason.MAX_PROMPT_LENGTH_EXCEEDED:
                raise ContextWindowExceededError("the rollout engine refused a prompt over its max_prompt_length") from None
            raise ModelProviderError(f"rollout engine ended the episode: {event.reason}") from None
        except (ConfigError, ModelProviderError):
            raise
        except Exception as exc:  # noqa: BLE001 - any engine failure is the provider's, never the model's answer
            raise ModelProviderError(f"rollout engine failed: {type(exc).__name__}: {exc}") from exc
        with self._lock:
            self.outputs.append(output)
        return model_output_to_response(output)


class ModelClientRolloutEngine(RolloutEngine):
    """Our ``ModelClient`` as an rLLM ``RolloutEngine`` (both v0.2.1 and HEAD call ``get_model_response``).

    ``tokenizer`` (a transformers tokenizer with a chat template) supplies prompt and completion
    ids when the client reports none; the completion then ends with the tokenizer's EOS, as a
    server's sampled ids would. Sampling keys rLLM passes (``max_tokens``, ``temperature``...) go to
    the client; engine-only keys (``application_id``...) do not.
    """

    def __init__(self, client: ModelClient, tokenizer: Any = None, *, sampling: dict[str, Any] | None = None):
        super().__init__()
        self.client = client
        self.tokenizer = tokenizer
        self.sampling = dict(sampling or {})
        self.calls = 0
        self._lock = threading.Lock()
        if not hasattr(self, "weight_version"):  # v0.2.1's base class has no policy versions
            self.weight_version = 0

    async def get_model_response(self, messages: list[dict], **kwargs: Any) -> Any:
        sampling = {**self.sampling, **{k: v for k, v in kwargs.items() if k not in ENGINE_ONLY_KEYS}}
        response = await asyncio.to_thread(self.client.complete, messages, **sampling)
        with self._lock:
            self.calls += 1
        prompt_ids, completion_ids = response.prompt_ids, response.completion_ids
        if (prompt_ids is None or completion_ids is None) and self.tokenizer is not None:
            prompt_ids, completion_ids = self._tokenize(messages, response.text)
        output = ModelOutput(
            text=response.text,
            content=response.text,
            prompt_ids=prompt_ids,
            completion_ids=completion_ids,
            logprobs=response.logprobs,
            prompt_length=len(prompt_ids or []),
            completion_length=len(completion_ids or []),
            finish_reason=response.finish_reason,
        )
        if hasattr(output, "weight_version"):
            output.weight_version = self.weight_version
        return output

    def _tokenize(self, messages: list[dict], text: str) -> tuple[list[int], list[int]]:
        rendered = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        if hasattr(rendered, "keys") and "input_ids" in rendered:
            rendered = rendered["input_ids"]
        completion = list(self.tokenizer.encode(text, add_special_tokens=False))
        if self.tokenizer.eos_token_id is not None:
            completion.append(int(self.tokenizer.eos_token_id))
        return list(rendered), completion


__all__ = ["ModelClientRolloutEngine", "RolloutEngineModelClient", "model_output_to_response"]
