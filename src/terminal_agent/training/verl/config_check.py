"""Level 2: verl's own ``validate_config`` and dataclass conversion on a composed trainer config.

Self-contained on purpose: it imports only omegaconf and verl, so it runs in-process where verl
is installed and, as a script, in a separate interpreter that has verl but not terminal-agent
(the CI venv of ``scripts/setup_verl_check_venv.sh``)::

    VERL_PYTHON config_check.py A.yaml [B.yaml ...]   # one JSON line per file: {"ok": true, ...}

verl checks a LoRA rank against vLLM's supported ranks by importing vLLM. Where vLLM is absent
(the CI venv) that one step runs with LoRA off, and the answer's ``notes`` say so.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from typing import Any


def _register_resolvers() -> None:
    from omegaconf import OmegaConf

    # rLLM registers the same resolver before it resolves its config (train_agent_ppo.TaskRunner.run)
    if not OmegaConf.has_resolver("mul"):
        OmegaConf.register_new_resolver("mul", lambda x, y: int(x) * int(y))


def _vllm_importable() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def check_config(config: Any) -> list[str]:
    """Run verl's checks on ``config`` (a DictConfig); return notes on what could not run. Raises what verl raises."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    _register_resolvers()
    config = OmegaConf.create(OmegaConf.to_container(config, resolve=True))
    notes: list[str] = []
    model = config.actor_rollout_ref.model
    if (model.get("lora_rank", 0) > 0 or model.get("lora", {}).get("rank", 0) > 0) and not _vllm_importable():
        notes.append(f"LoRA rank {model.get('lora_rank')} not checked against vLLM's ranks (vLLM is not installed)")
        model.lora_rank = 0
        if "lora" in model and "rank" in model.lora:
            model.lora.rank = 0
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        validate_config(config=config, use_reference_policy=need_reference_policy(config),
                        use_critic=need_critic(config))
        # the typed configs verl's workers build from the same sections
        omega_conf_to_dataclass(config.actor_rollout_ref.rollout)
        omega_conf_to_dataclass(config.algorithm)
        omega_conf_to_dataclass(config.actor_rollout_ref.actor.optim)
        if need_reference_policy(config):
            omega_conf_to_dataclass(config.actor_rollout_ref.ref)
    return notes


def main(argv: list[str]) -> int:
    from omegaconf import OmegaConf

    if not argv:
        print(json.dumps({"ok": False, "error": "usage: config_check.py COMPOSED.yaml [...]"}))
        return 2
    try:
        import verl  # noqa: F401  (its version is part of the answer)
    except ImportError as exc:
        print(json.dumps({"ok": False, "unavailable": True, "error": f"verl does not import: {exc}"}))
        return 3
    status = 0
    for path in argv:
        try:
            notes = check_config(OmegaConf.load(path))
        # verl reports a bad config with AssertionError, ValueError, TypeError or omegaconf errors; all are answers
        except Exception as exc:  # noqa: BLE001
            print(json.dumps({"file": path, "ok": False, "error": f"{type(exc).__name__}: {exc}",
                              "verl": verl.__version__}), flush=True)
            status = 1
            continue
        print(json.dumps({"file": path, "ok": True, "verl": verl.__version__, "notes": notes}), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
