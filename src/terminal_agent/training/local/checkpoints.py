"""Checkpoints of the local trainer: adapter, optimizer, step, RNG states and data order.

A checkpoint is a directory ``checkpoints/step_000N`` written under a temporary name and renamed
into place, so a run killed while writing leaves the previous checkpoint intact; ``latest``
names the newest complete one. It holds:

* ``adapter/`` - the LoRA weights (peft ``save_pretrained``; loadable on its own for evaluation);
* ``trainer_state.pt`` - optimizer state, the step that finished, the data order's state, and the
  RNG states of Python, numpy and torch (CPU and CUDA), so the continuation after a resume draws
  exactly what an uninterrupted run would have drawn.

The layout's names (and :func:`latest_checkpoint`, which finds the newest complete checkpoint) live in
:mod:`terminal_agent.models.adapter_loading`, which reads a trained adapter for evaluation without the trainer.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from terminal_agent.models.adapter_loading import ADAPTER_DIR, LATEST_FILE, STATE_FILE, checkpoint_root, latest_checkpoint

logger = logging.getLogger(__name__)


#: Curriculum level of each task difficulty (``Task.difficulty``); any other value counts as medium.
DIFFICULTY_LEVELS: dict[str, int] = {"easy": 0, "medium": 1, "hard": 2}


class TaskOrder:
    """The order in which train tasks are drawn: a fresh seeded permutation per epoch.

    ``next_batch(k)`` returns the next ``k`` task indices, crossing into the next epoch as needed.
    Its whole state is ``(epoch, position)``; together with the seed and the task count it
    reproduces every later draw exactly.

    With ``levels`` (one curriculum level per task, see :meth:`easy_to_hard`) the order opens the
    tasks level by level: the first ``opening_draws`` draws are split into equal parts, one fewer
    than there are levels, and part ``i`` draws only tasks of level ``i`` or lower (seeded
    permutations of that pool, one after another); from draw ``opening_draws`` on, every task. Its
    state is then the number of draws made (``position``); every draw is a function of it.
    """

    def __init__(self, count: int, seed: int, epoch: int = 0, position: int = 0, *,
                 levels: list[int] | None = None, opening_draws: int = 0):
        if count < 1:
            raise ValueError("TaskOrder needs at least one task")
        if levels is not None and len(levels) != count:
            raise ValueError(f"TaskOrder got {len(levels)} curriculum levels for {count} tasks")
        self.count, self.seed, self.epoch, self.position = count, seed, epoch, position
        self.levels = list(levels) if levels is not None else None
        self.opening_draws = max(0, int(opening_draws))
        self._pools: dict[int, list[int]] = {}
        self._perms: dict[tuple[int, int], list[int]] = {}

    @classmethod
    def easy_to_hard(cls, difficulties: list[str], seed: int, opening_draws: int) -> "TaskOrder":
        """The curriculum order of tasks with these difficulties (``easy``, ``medium``, ``hard``)."""
        levels = [DIFFICULTY_LEVELS.get(str(d).lower(), DIFFICULTY_LEVELS["medium"]) for d in difficulties]
        return cls(len(levels), seed, levels=levels, opening_draws=opening_draws)

    def _permutation(self, epoch: int) -> list[int]:
        return [int(index) for index in np.random.default_rng([self.seed, epoch]).permutation(self.count)]

    def stage_of(self, draw: int) -> int:
        """The curriculum stage of draw number ``draw`` (0: the easiest level only); without levels, 0."""
        if self.levels is None:
            return 0
        last = len(set(self.levels)) - 1
        if last == 0 or self.opening_draws == 0 or draw >= self.opening_draws:
            return last
        return min(last, draw * last // self.opening_draws)

    def _stage_start(self, stage: int) -> int:
        last = len(set(self.levels or [0])) - 1
        if last == 0 or self.opening_draws == 0:
            return 0
        return -(-stage * self.opening_draws // last)  # the first draw d with d * last // opening >= stage

    def _curriculum_task(self, draw: int) -> int:
        stage = self.stage_of(draw)
        pool = self._pools.get(stage)
        if pool is None:
            level = sorted(set(self.levels or []))[stage]
            pool = self._pools[stage] = [i for i, v in enumerate(self.levels or []) if v <= level]
        j = draw - self._stage_start(stage)
        cycle = j // len(pool)
        perm = self._perms.get((stage, cycle))
        if perm is None:
            perm = self._perms[(stage, cycle)] = np.random.default_rng([self.seed, 1_000 + stage, cycle]).permutation(len(pool)).tolist()
        return pool[perm[j % len(pool)]]

    def next_batch(self, k: int) -> list[int]:
        out: list[int] = []
        if self.levels is not None:
            out = [self._curriculum_task(d) for d in range(self.position, self.position + k)]
            self.position += k
            return out
        while len(out) < k:
            perm = self._permutation(self.epoch)
            take = min(k - len(out), self.count - self.position)
            out.extend(perm[self.position : self.position + take])
            self.position += take
            if self.position >= self.count:
                self.epoch, self.position = self.epoch + 1, 0
        return out

    def peek_batch(self, k: int) -> list[int]:
        """What ``next_batch(k)`` will return, without drawing it (the state is unchanged)."""
        return TaskOrder.from_state(self.state_dict()).next_batch(k)

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"count": self.count, "seed": self.seed, "epoch": self.epoch, "position": self.position}
        if self.levels is not None:
            state.update(levels=list(self.levels), opening_draws=self.opening_draws)
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "TaskOrder":
        return cls(state["count"], state["seed"], state["epoch"], state["position"],
                   levels=state.get("levels"), opening_draws=state.get("opening_draws", 0))


def rng_state() -> dict[str, Any]:
    import torch

    state: dict[str, Any] = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@dataclass
class TrainerCheckpoint:
    """What :func:`load_checkpoint` gives back."""

    path: Path
    step: int
    """The last step that finished (the run continues with ``step + 1``)."""
    optimizer: dict[str, Any]
    task_order: dict[str, int]
    rng: dict[str, Any]
    extra: dict[str, Any]


def save_checkpoint(
    run_dir: Path,
    step: int,
    model: Any,
    optimizer: Any,
    task_order: TaskOrder,
    *,
    extra: dict[str, Any] | None = None,
    keep: int | None = None,
) -> Path:
    """Write checkpoint ``step`` atomically and prune older ones beyond ``keep``."""
    import torch

    root = checkpoint_root(run_dir)
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step_{step:06d}"
    staging = root / f".step_{step:06d}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    model.save_pretrained(str(staging / ADAPTER_DIR))
    torch.save(
        {
            "step": step,
            "optimizer": optimizer.state_dict(),
            "task_order": task_order.state_dict(),
            "rng": rng_state(),
            "extra": dict(extra or {}),
        },
        staging / STATE_FILE,
    )
    if final.exists():
        shutil.rmtree(final)
    staging.rename(final)
    latest_tmp = root / f".{LATEST_FILE}.tmp-{os.getpid()}"
    latest_tmp.write_text(final.name + "\n")
    latest_tmp.replace(root / LATEST_FILE)
    if keep is not None:
        done = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("step_"))
        for old in done[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    logger.info("checkpoint %s written", final)
    return final


WARM_START_DIR = "warm_start"


def save_warm_start(run_dir: Path, model: Any) -> Path:
    """Keep the adapter the SFT warm start ended with in ``run_dir/warm_start`` (never pruned), so that
    GRPO's own effect can be measured against it; loadable with :func:`load_adapter_weights`."""
    final = Path(run_dir) / WARM_START_DIR
    staging = Path(run_dir) / f".{WARM_START_DIR}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    model.save_pretrained(str(staging / ADAPTER_DIR))
    if final.exists():
        shutil.rmtree(final)
    staging.rename(final)
    return final


def warm_start_checkpoint(run_dir: Path) -> Path | None:
    """``run_dir/warm_start`` when the run had an SFT warm start, else None."""
    path = Path(run_dir) / WARM_START_DIR
    return path if (path / ADAPTER_DIR).is_dir() else None


def load_checkpoint(path: Path) -> TrainerCheckpoint:
    import torch

    state = torch.load(Path(path) / STATE_FILE, weights_only=False)
    return TrainerCheckpoint(
        path=Path(path), step=int(state["step"]), optimizer=state["optimizer"], task_order=state["task_order"],
        rng=state["rng"], extra=state.get("extra", {}),
    )


def load_adapter_weights(model: Any, path: Path) -> None:
    """Load a checkpoint's LoRA weights into ``model`` (a peft model with the same adapter config)."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    adapter = Path(path) / ADAPTER_DIR
    files = sorted(adapter.glob("adapter_model.safetensors"))
    if files:
        state = load_file(str(files[0]))
    else:
        import torch

        state = torch.load(adapter / "adapter_model.bin", weights_only=True)
    set_peft_model_state_dict(model, state)


__all__ = [
    "DIFFICULTY_LEVELS",
    "TaskOrder",
    "TrainerCheckpoint",
    "latest_checkpoint",
    "save_warm_start",
    "warm_start_checkpoint",
    "load_adapter_weights",
    "load_checkpoint",
    "rng_state",
    "save_checkpoint",
    "set_rng_state",
]
