"""The learning experiment: train on a train split, then evaluate the base and the trained policy
on a held-out split and compare them with ``eval compare``'s paired bootstrap.

Layout of the output directory::

    train/                 the local training run (metrics.jsonl, curves.png, checkpoints/, wandb/)
    eval_base/results.json the held-out evaluation of the base model
    eval_warm_start/results.json  the same with the SFT warm start's adapter (runs with a warm start only)
    eval_trained/results.json  the same tasks, attempts and sampling with the trained adapter
    comparison.md / comparison.json  paired bootstraps (reward and pass rate): trained minus base, and with
                           a warm start also trained minus warm start (GRPO's own effect) and warm start
                           minus base (the SFT's effect); comparison.md ends with the behaviour tables
                           (``eval behaviour``: endings, format errors, commands, per-task pairing)
    splits.json            which task ids were trained on and which were held out

Held-out tasks never reach the trainer (nor its SFT warm start): the split is made here, by task
id hash (``split_tasks``), or given as a separate source.

The evaluations sample through the trainer's own sampler
(:func:`~terminal_agent.training.local.policy.policy_eval_client`), as ``terminal-agent eval run
--adapter CHECKPOINT`` does for one checkpoint.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import Task
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.policy import policy_eval_client
from terminal_agent.training.local.trainer import TrainingProgress, TrainingSummary, train_local

logger = logging.getLogger(__name__)


@dataclass
class ExperimentResult:
    """Where everything went and the two comparisons."""

    out_dir: Path
    training: TrainingSummary
    base_results: Path
    trained_results: Path
    comparisons: dict[str, Any]
    """``reward`` and ``pass`` -> trained minus base as a dict; with a warm start also ``grpo_reward`` /
    ``grpo_pass`` (trained minus warm start) and ``sft_reward`` / ``sft_pass`` (warm start minus base)."""
    markdown: str
    warm_start_results: Path | None = None


COMPARISONS = (
    ("", "trained vs base", "base", "trained"),
    ("grpo_", "trained vs warm start (GRPO's own effect)", "warm_start", "trained"),
    ("sft_", "warm start vs base (the SFT warm start's effect)", "base", "warm_start"),
)


def evaluate_policy(client: Any, tasks: Sequence[Task], out_dir: Path, *, attempts: int, max_steps: int, max_tokens: int,
                    temperature: float, concurrency: int, on_progress: Any = None,
                    sandbox: SandboxConfig | None = None) -> Path:
    """Run ``tasks`` ``attempts`` times with ``client`` through the rollout runner (in ``sandbox``, a
    ``SandboxConfig``; default Docker); the results.json path."""
    from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner

    config = RolloutConfig(
        attempts=attempts, max_steps=max_steps, concurrency=concurrency, output_dir=out_dir,
        sampling={"temperature": temperature, "max_tokens": max_tokens},
        sandbox=sandbox if sandbox is not None else SandboxConfig(),
    )
    RolloutRunner(client, config, on_progress=on_progress).run(list(tasks))
    return out_dir / "results.json"


#: Written beside an evaluation's results.json once it finished: what it ran (a resumed experiment
#: reuses an evaluation whose settings are the same instead of running it again).
EVALUATION_SETTINGS = "evaluation.json"


def evaluation_settings(config: LocalTrainingConfig, tasks: Sequence[Task], adapter: Path | None, *, attempts: int,
                        max_steps: int, max_tokens: int, temperature: float, **_: Any) -> dict[str, Any]:
    """What makes two evaluations the same: the model, the adapter checkpoint, the tasks, attempts and sampling."""
    return {
        "model": config.model_path, "seed": config.seed, "adapter": adapter.name if adapter is not None else None,
        "tasks": sorted(t.task_id for t in tasks), "attempts": attempts, "max_steps": max_steps,
        "max_tokens": max_tokens, "temperature": temperature, "sandbox": config.episode.env.sandbox.backend,
    }


def finished_evaluation(eval_dir: Path, settings: dict[str, Any]) -> Path | None:
    """``eval_dir``'s results.json when an evaluation with ``settings`` finished there; else None."""
    results, marker = eval_dir / "results.json", eval_dir / EVALUATION_SETTINGS
    if not (results.is_file() and marker.is_file()):
        return None
    try:
        recorded = json.loads(marker.read_text())
    except (OSError, ValueError):  # a marker cut short by a kill: run the evaluation again
        return None
    return results if recorded == json.loads(json.dumps(settings)) else None


def run_learning_experiment(
    config: LocalTrainingConfig,
    train_tasks: Sequence[Task],
    held_out_tasks: Sequence[Task],
    out_dir: Path,
    *,
    eval_attempts: int = 4,
    eval_temperature: float = 0.6,
    eval_concurrency: int = 4,
    progress: TrainingProgress | None = None,
    on_eval_progress: Any = None,
    n_boot: int = 10_000,
) -> ExperimentResult:
    """Train, evaluate base and trained on ``held_out_tasks``, compare (see the module docstring)."""
    from terminal_agent.evaluation.report import compare_runs, comparison_markdown
    from terminal_agent.evaluation.results import RunResults
    from terminal_agent.training.local.checkpoints import latest_checkpoint, load_adapter_weights, warm_start_checkpoint
    from terminal_agent.training.local.policy import load_policy

    held_ids = {t.task_id for t in held_out_tasks}
    if held_ids & {t.task_id for t in train_tasks}:
        raise ConfigError("a held-out task is also a train task")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "splits.json").write_text(json.dumps(
        {"train": sorted(t.task_id for t in train_tasks), "held_out": sorted(held_ids)}, indent=2))
    summary = train_local(config, train_tasks, out_dir / "train", progress=progress)

    policy = load_policy(config)  # the base weights plus a fresh (identity) adapter
    checkpoint = latest_checkpoint(out_dir / "train")
    if checkpoint is None:
        raise ConfigError(f"training wrote no checkpoint in {out_dir / 'train'}")
    eval_kwargs = dict(attempts=eval_attempts, max_steps=config.episode.max_steps,
                       max_tokens=config.max_tokens_per_turn, temperature=eval_temperature,
                       concurrency=eval_concurrency, on_progress=on_eval_progress, sandbox=config.episode.env.sandbox)

    def evaluate(name: str, subdir: str, adapter: Path | None) -> Path:
        settings = evaluation_settings(config, held_out_tasks, adapter, **eval_kwargs)
        finished = finished_evaluation(out_dir / subdir, settings)
        if finished is not None:  # a resumed experiment: this evaluation ran to the end before
            logger.info("%s: reusing the finished evaluation in %s", name, finished.parent)
            return finished
        # `terminal-agent eval run --adapter` samples through the same sampler (models.local_model_sampling)
        client = policy_eval_client(policy, config, concurrency=eval_concurrency, name=name)
        try:
            path = evaluate_policy(client, held_out_tasks, out_dir / subdir, **eval_kwargs)
        finally:
            close = getattr(client, "close", None)  # the continuous sampler's worker and cache; the batched one has none
            if callable(close):
                close()
        (out_dir / subdir / EVALUATION_SETTINGS).write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")
        return path

    results: dict[str, Path] = {}
    with policy.model.disable_adapter():
        results["base"] = evaluate("base", "eval_base", None)
    warm_start = warm_start_checkpoint(out_dir / "train")
    if warm_start is not None:
        load_adapter_weights(policy.model, warm_start)
        results["warm_start"] = evaluate("warm start (SFT)", "eval_warm_start", warm_start)
    load_adapter_weights(policy.model, checkpoint)
    results["trained"] = evaluate(f"trained ({checkpoint.name})", "eval_trained", checkpoint)

    runs = {name: RunResults.read(path) for name, path in results.items()}
    comparisons: dict[str, Any] = {}
    parts: list[str] = []
    for prefix, title, a, b in COMPARISONS:
        if a not in runs or b not in runs:
            continue
        parts.append(f"### {title}")
        for metric in ("reward", "pass"):
            comparison = compare_runs(runs[a], runs[b], metric=metric, n_boot=n_boot, seed=0)
            comparisons[f"{prefix}{metric}"] = comparison.to_dict()
            parts.append(comparison_markdown(runs[a], runs[b], comparison, metric))
    from terminal_agent.evaluation.behaviour import behaviour_markdown

    # what the models do differently (endings, format errors, commands), from the evaluations' transcripts
    parts.append("### Behaviour on the held-out tasks\n\n" + behaviour_markdown({name: path.parent for name, path in results.items()}))
    markdown = "\n\n".join(parts)
    (out_dir / "comparison.md").write_text(markdown + "\n")
    (out_dir / "comparison.json").write_text(json.dumps(comparisons, indent=2, default=str))
    return ExperimentResult(out_dir, summary, results["base"], results["trained"], comparisons, markdown,
                            warm_start_results=results.get("warm_start"))


__all__ = ["EVALUATION_SETTINGS", "ExperimentResult", "evaluate_policy", "evaluation_settings", "finished_evaluation",
           "run_learning_experiment"]
