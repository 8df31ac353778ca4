"""A local training run in its own process, for the kill/resume test: python local_training_child.py RUN_DIR STEPS.

Trains on two shipped tasks (one per step) with the alternating demonstration driver, a
checkpoint every step; prints the summary's key figures as one JSON line at the end.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from local_helpers import alternating_client_factory, shipped_tasks  # noqa: E402

from terminal_agent.rollout.episode_spec import EpisodeSpec  # noqa: E402
from terminal_agent.training.local.config import LocalTrainingConfig  # noqa: E402
from terminal_agent.training.local.trainer import train_local  # noqa: E402

TASK_IDS = ("fix-stats-script", "count-log-levels")
SEED = 5


def config(steps: int) -> LocalTrainingConfig:
    return LocalTrainingConfig(
        # one turn: the reference solution's episode is cut after its command and graded (reward 1), the other
        # finishes at once, so each step still updates; a second turn would only add CPU time
        group_size=2, tasks_per_step=1, episode=EpisodeSpec.small(1), steps=steps, num_threads=1, save_freq=1,
        keep_checkpoints=None, seed=SEED, micro_batch_tokens=2048, experiment="resume-test",
    )


if __name__ == "__main__":
    run_dir, steps = Path(sys.argv[1]), int(sys.argv[2])
    tasks = shipped_tasks(*TASK_IDS)
    summary = train_local(config(steps), tasks, run_dir, client_factory=alternating_client_factory(tasks))
    print(json.dumps({"resumed_from": summary.resumed_from, "steps_this_session": summary.steps_this_session,
                      "optimizer_steps": summary.optimizer_steps}))
