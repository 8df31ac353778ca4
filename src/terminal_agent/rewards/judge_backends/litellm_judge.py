"""``litellm``: any provider litellm knows, configured exactly like eval.

The model is ``JudgeConfig.model``, else ``LITELLM_MODEL``; the endpoint and key are the
backend options, else ``LITE_LLM_API_BASE`` / ``LITE_LLM_API_KEY``. The client's own retries are
off: the judge's retry loop (``JudgeConfig.max_attempts``) is the one place that retries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import ConfigError, JudgeUnavailableError
from terminal_agent.interfaces import ModelClient, ModelResponse
from terminal_agent.models.litellm_client import ENV_MODEL, LiteLLMConfig, LiteLLMModelClient, import_litellm
from terminal_agent.rewards.judge import JudgeConfig, ModelClientJudge

logger = logging.getLogger(__name__)


class LiteLLMJudgeOptions(BaseModel):
    """Settings of the ``litellm`` backend beyond the model name (the section ``judge.litellm``)."""

    model_config = ConfigDict(extra="forbid")

    api_base: str | None = None
    """Endpoint URL; ``None`` reads ``LITE_LLM_API_BASE`` (then the provider's default)."""
    api_key: str | None = Field(default=None, repr=False)
    """Key; ``None`` reads ``LITE_LLM_API_KEY`` (then the provider's usual variable)."""


def litellm_cost(model: str) -> Callable[[ModelResponse], float | None]:
    """A function pricing a reply of ``model`` from litellm's cost map (None when litellm has no price)."""

    def cost_of(response: ModelResponse) -> float | None:
        try:
            prompt_cost, completion_cost = import_litellm().cost_per_token(
                model=model, prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens
            )
        except Exception:  # noqa: BLE001 - litellm raises several types for an unpriced model; cost is then unknown
            return None
        return float(prompt_cost) + float(completion_cost)

    return cost_of


def make_litellm_judge(config: JudgeConfig, client: ModelClient | None = None) -> ModelClientJudge:
    options = config.backend_settings("litellm", LiteLLMJudgeOptions)
    try:
        settings = LiteLLMConfig.from_env(
            model=config.model,
            api_base=options.api_base,
            api_key=options.api_key,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            timeout_s=config.timeout_s,
            max_retries=0,
        )
    except ConfigError:
        raise JudgeUnavailableError(
            f"the litellm judge needs a model: set {ENV_MODEL}, judge.model, or pass --model"
        ) from None
    return ModelClientJudge(
        LiteLLMModelClient(settings), config, name=f"litellm:{settings.model}", cost_of=litellm_cost(settings.model)
    )
