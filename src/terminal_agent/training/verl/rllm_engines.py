"""Bridges between rLLM's rollout engines and our model clients, in both directions.

* :class:`RolloutEngineModelClient` - an rLLM ``RolloutEngine`` (vLLM through verl in training) seen as
  our synchronous :class:`~terminal_agent.interfaces.ModelClient`, so that the one episode engine
  (:mod:`terminal_agent.rollout.engine`) drives rLLM's training rollouts too. It is
  called from a worker thread and hands each request to the event loop that owns the engine. With an
  engine that takes token ids (``supports_token_in_token_out``: verl's) it renders the prompt ids
  itself (:mod:`terminal_agent.training.verl.rllm_chat_parser`), each turn extending the last token for
  token, and never uses the engine's chat parser.
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
from terminal_agent.training.verl.rllm_chat_parser import TurnPromptBuilder, chat_parser_for

if not RLLM_AVAILABLE:  # ModuleNotFoundError naming rllm: callers tell "rLLM missing" from a broken install
    raise ModuleNotFoundError(
        "terminal_agent.training.verl.rllm_engines needs rLLM: "
        'pip install "rllm @ git+https://github.com/rllm-org/rllm@9beb6e0f676a46d38858991fd79ac5f8e0b16d4c" (see docs/rllm.md)',
        name="rllm",
    )

from rllm.engine.rollout.rollout_engine import ModelOutput, RolloutEngine  # noqa: E402
from rllm.workflows.workflow import TerminationEvent, TerminationReason  # noqa: E402

logger = logging.getLogger(__name__)

ENGINE_ONLY_KEYS = ("application_id", "enforce_max_prompt_length", "validate", "meta_info")
"""Keywords rLLM's engines pass along that a plain model client does not take."""

PARSER_ONLY_KEYS = ("tools", "accumulate_reasoning", "reasoning_effort")
"""Keywords of ``get_model_response`` that go to the engine's chat parser, never to the sampler."""


def engine_takes_token_ids(engine: Any) -> bool:
    """The engine samples from prompt ids (``get_token_output_from_token_input``) and has a tokenizer."""
    return bool(getattr(engine, "supports_token_in_token_out", False)) and getattr(engine, "tokenizer", None) is not None


def engine_disables_thinking(engine: Any) -> bool:
    """``rllm.disable_thinking`` as the engine applies it (its parser's flag, else its config's)."""
    parser = getattr(engine, "chat_parser", None)
    if parser is not None and hasattr(parser, "disable_thinking"):
        return bool(parser.disable_thinking)
    config = getattr(engine, "config", None)
    if config is None:
        return False
    try:
        return bool(config.get("rllm", {}).get("disable_thinking", False))
    except AttributeError:
        return False


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

    Token in, token out (``token_in_token_out``: None uses it when the engine supports it; True
    requires it; False never): the client builds each prompt's ids with ``chat_parser`` (default
    :func:`~terminal_agent.training.verl.rllm_chat_parser.chat_parser_for` the engine's tokenizer) through a
    :class:`~terminal_agent.training.verl.rllm_chat_parser.TurnPromptBuilder`, so turn k+1's prompt is turn
    k's prompt + completion (+ the end-of-turn ids the template adds) + the new messages, calls the
    engine's public ``get_token_output_from_token_input`` and builds rLLM's ``ModelOutput`` itself.
    rLLM's engines otherwise re-render the whole chat each turn with a parser picked by the model's
    name, which fails for templates rLLM does not know (no ``parse_completion``) and re-tokenizes
    history. Other engines get ``get_model_response(messages)``.
    """

    is_thread_safe = True

    def __init__(
        self,
        engine: Any,
        loop: asyncio.AbstractEventLoop,
        *,
        timeout_s: float | None = None,
        token_in_token_out: bool | None = None,
        chat_parser: Any = None,
        **engine_kwargs: Any,
    ) -> None:
        self.name = f"rllm/{type(engine).__name__}"
        self.engine = engine
        self.loop = loop
        self.timeout_s = timeout_s
        self.engine_kwargs = {"enforce_max_prompt_length": False, **engine_kwargs}
        self.outputs: list[Any] = []
        self._lock = threading.Lock()
        takes_ids = engine_takes_token_ids(engine)
        if token_in_token_out and not takes_ids:
            raise ConfigError(
                f"token_in_token_out=true: the rollout engine {type(engine).__name__} takes no token ids "
                "(supports_token_in_token_out is false or it has no tokenizer)"
            )
        self.token_in_token_out = takes_ids if token_in_token_out is None else bool(token_in_token_out)
        self.chat_parser = None
        self.prompts: TurnPromptBuilder | None = None
        if self.token_in_token_out:
            self.chat_parser = chat_parser or chat_parser_for(engine.tokenizer, disable_thinking=engine_disables_thinking(engine))
            self.prompts = TurnPromptBuilder(self.chat_parser, engine.tokenizer)

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        if threading.get_ident() == getattr(self.loop, "_thread_id", None):  # would deadlock: the loop waits on us
            raise RuntimeError("RolloutEngineModelClient.complete() must not run on the engine's event loop thread")
        if self.token_in_token_out:
            output = self._complete_from_token_ids(messages, sampling)
        else:
            output = self._await(self.engine.get_model_response(messages, **{**self.engine_kwargs, **sampling}))
        with self._lock:
            self.outputs.append(output)
        return model_output_to_response(output)

    def _complete_from_token_ids(self, messages: list[dict[str, str]], sampling: dict[str, Any]) -> Any:
        assert self.prompts is not None and self.chat_parser is not None
        try:
            with self._lock:
                prompt_ids = self.prompts.prompt_ids(messages)
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - a template that cannot render this chat is the setup's fault
            raise ConfigError(f"chat parser {type(self.chat_parser).__name__}: {type(exc).__name__}: {exc}") from exc
        weight_version = getattr(self.engine, "weight_version", None)
        kwargs = {k: v for k, v in {**self.engine_kwargs, **sampling}.items() if k not in PARSER_ONLY_KEYS}
        token_output = self._await(self.engine.get_token_output_from_token_input(token_input=list(prompt_ids), **kwargs))
        completion_ids = [int(token) for token in token_output.token_ids]
        logprobs = getattr(token_output, "log_probs", None)
        try:
            parsed = self.chat_parser.parse_completion(completion_ids)
        except Exception as exc:  # noqa: BLE001 - an unparsable reply is still a reply: keep its text as content
            logger.warning("chat parser %s could not parse a completion: %s", type(self.chat_parser).__name__, exc)
            parsed = {"content": None, "reasoning": None, "tool_calls": None}
        text = self.engine.tokenizer.decode(completion_ids, skip_special_tokens=True)  # as rLLM's VerlEngine reports it
        output = ModelOutput(
            text=text,
            content=parsed.get("content") if parsed.get("content") is not None else text,
            reasoning=parsed.get("reasoning"),
            tool_calls=parsed.get("tool_calls") or None,
            prompt_ids=list(prompt_ids),
            completion_ids=completion_ids,
            logprobs=list(logprobs) if logprobs is not None else None,
            prompt_length=len(prompt_ids),
            completion_length=len(completion_ids),
            finish_reason=getattr(token_output, "stop_reason", None) or "stop",
        )
        # verl's vLLM server stamps each generation with the global step of the weights it holds (set by the
        # trainer's update_weights(global_steps)); rLLM's VerlEngine leaves its own weight_version at 0
        stamped = (getattr(token_output, "extra_fields", None) or {}).get("global_steps")
        if isinstance(stamped, int) and not isinstance(stamped, bool):
            weight_version = stamped
        if weight_version is not None and hasattr(output, "weight_version"):
            output.weight_version = weight_version
        with self._lock:
            self.prompts.record(messages, prompt_ids, completion_ids)
        return output

    def _await(self, coroutine: Any) -> Any:
        """Run ``coroutine`` on the engine's loop; engine failures become our provider/context errors."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(self.timeout_s)
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

    async def get_model_response(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
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

    def _tokenize(self, messages: list[dict[str, Any]], text: str) -> tuple[list[int], list[int]]:
        rendered = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        if hasattr(rendered, "keys") and "input_ids" in rendered:
            rendered = rendered["input_ids"]
        completion = list(self.tokenizer.encode(text, add_special_tokens=False))
        if self.tokenizer.eos_token_id is not None:
            completion.append(int(self.tokenizer.eos_token_id))
        return list(rendered), completion


__all__ = [
    "ModelClientRolloutEngine",
    "RolloutEngineModelClient",
    "engine_disables_thinking",
    "engine_takes_token_ids",
    "model_output_to_response",
]
