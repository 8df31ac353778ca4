"""Checkpoints of the local trainer: adapter, optimizer, step, RNG states and data order.

A checkpoint is a directory ``checkpoints/step_000N`` written under a temporary name and renamed
into place, so a run killed while writing leaves the previous checkpoint intact; ``latest``
names the newest complete one. It holds:

* ``adapter/`` - the LoRA weights (peft ``save_pretrained``; loadable on its own for evaluation);
* ``trainer_state.pt`` - optimizer state, the step that finished, the data order's state, and the
  RNG states of Python, numpy and torch (CPU and CUDA), so the continuation after a resume draws
  exactly what an uninterrupted run would have drawn.
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

logger = logging.getLogger(__name__)

STATE_FILE = "trainer_state.pt"
ADAPTER_DIR = "adapter"
LATEST_FILE = "latest"


class TaskOrder:
    """The order in which train tasks are drawn: a fresh seeded permutation per epoch.

    ``next_batch(k)`` returns the next ``k`` task indices, crossing into the next epoch as needed.
    Its whole state is ``(epoch, position)``; together with the seed and the task count it
    reproduces every later draw exactly.
    """

    def __init__(self, count: int, seed: int, epoch: int = 0, position: int = 0):
        if count < 1:
            raise ValueError("TaskOrder needs at least one task")
        self.count, self.seed, self.epoch, self.position = count, seed, epoch, position

    def _permutation(self, epoch: int) -> list[int]:
        return np.random.default_rng([self.seed, epoch]).permutation(self.count).tolist()

    def next_batch(self, k: int) -> list[int]:
        out: list[int] = []
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
        return TaskOrder(self.count, self.seed, self.epoch, self.position).next_batch(k)

    def state_dict(self) -> dict[str, int]:
        return {"count": self.count, "seed": self.seed, "epoch": self.epoch, "position": self.position}

    @classmethod
    def from_state(cls, state: dict[str, int]) -> "TaskOrder":
        return cls(state["count"], state["seed"], state["epoch"], state["position"])


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


def checkpoint_root(run_dir: Path) -> Path:
    return Path(run_dir) / "checkpoints"


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


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest complete checkpoint of ``run_dir`` (None when there is none)."""
    root = checkpoint_root(run_dir)
    pointer = root / LATEST_FILE
    if pointer.is_file():
        candidate = root / pointer.read_text().strip()
        if (candidate / STATE_FILE).is_file():
            return candidate
    done = sorted(p for p in root.glob("step_*") if (p / STATE_FILE).is_file()) if root.is_dir() else []
    return done[-1] if done else None


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
