"""Harbor's reward files, read as Harbor reads them, into the one scalar a trainer needs.

* ``reward.json`` wins over ``reward.txt`` when both exist (Harbor's precedence).
* ``reward.txt``: Python's ``float()`` of the whole text (surrounding whitespace allowed); the rewards are
  ``{"reward": value}``. An empty file, or text that is not a number, is a verifier failure.
* ``reward.json``: an object of key -> number (booleans refused). The scalar reward is its ``reward`` key when
  it has one, else the mean of its values (Harbor's own ``Mean`` metric keeps each key apart; a trainer needs
  one number, and the mean weighs every key alike).
* Values must be finite (``nan`` / ``inf`` would poison a training batch): a verifier failure otherwise.

Every failure raises :class:`~terminal_agent.errors.GradingError`: not scored, never reward 0.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from terminal_agent.errors import GradingError

REWARD_TXT = "reward.txt"
REWARD_JSON = "reward.json"
SCALAR_KEY = "reward"


@dataclass(frozen=True)
class HarborReward:
    """What the verifier's reward file says."""

    rewards: dict[str, float]
    """Harbor's rewards dict (``{"reward": x}`` for reward.txt)."""
    reward: float
    """The scalar: the ``reward`` key, else the mean of the values."""
    source: str
    """``reward.json`` or ``reward.txt``."""


def _finite(value: float, where: str) -> float:
    if not math.isfinite(value):
        raise GradingError(f"{where} holds {value!r}: a reward must be a finite number")
    return value


def parse_reward_text(data: bytes) -> HarborReward:
    """``reward.txt``'s float."""
    if not data:
        raise GradingError("the verifier's reward.txt is empty")
    try:
        value = float(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise GradingError(f"the verifier's reward.txt is not a number: {data[:80]!r}") from None
    value = _finite(value, REWARD_TXT)
    return HarborReward({SCALAR_KEY: value}, value, REWARD_TXT)


def parse_reward_json(data: bytes) -> HarborReward:
    """``reward.json``'s object of key -> number."""
    if not data:
        raise GradingError("the verifier's reward.json is empty")
    try:
        loaded = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GradingError(f"the verifier's reward.json does not parse: {exc}") from None
    if not isinstance(loaded, dict) or not loaded:
        raise GradingError(f"the verifier's reward.json must be a non-empty object of key -> number, not {str(loaded)[:80]}")
    rewards: dict[str, float] = {}
    for key, value in loaded.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise GradingError(f"reward.json[{key!r}] is {value!r}, not a number")
        rewards[str(key)] = _finite(float(value), f"reward.json[{key!r}]")
    scalar = rewards[SCALAR_KEY] if SCALAR_KEY in rewards else sum(rewards.values()) / len(rewards)
    return HarborReward(rewards, scalar, REWARD_JSON)


def read_reward(reward_json: bytes | None, reward_txt: bytes | None) -> HarborReward:
    """The verifier's reward from whichever files exist (None: absent)."""
    if reward_json is not None:
        return parse_reward_json(reward_json)
    if reward_txt is not None:
        return parse_reward_text(reward_txt)
    raise GradingError("the verifier wrote no reward file (/logs/verifier/reward.txt or reward.json)")
