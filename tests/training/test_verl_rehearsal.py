"""The real verl launch of ``verl_1gpu`` on this CPU machine, up to its first GPU call.

``launch_training.py verl_1gpu --rehearse`` in the verl launch venv (``scripts/setup_verl_launch_venv.sh``:
verl 0.9.1 and rLLM HEAD over this interpreter's packages, no vLLM) runs every stage a GPU node runs
before it touches a GPU: the plan (levels 1 and 2), the machine checks that apply, the leak sweep, the
parquet of the chosen tasks, a private Ray cluster that advertises one GPU it does not have, rLLM's
TaskRunner (verl's validate_config, the tokenizer of the embedded model, verl's datasets and dataloaders,
the resource pool) and the spawn of verl's actor/rollout worker. The worker's ``init_model`` then opens
the process group with ``torch.distributed.init_process_group(backend="nccl")``, and this machine's CPU
build of torch answers ``RuntimeError: Distributed package doesn't have NCCL built in``: that is the end
the test expects, and nothing earlier.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pandas
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training_scripts" / "launch_training.py"
#: What the first GPU call of the actor worker raises with a CPU build of torch (verl's init_model ->
#: initialize_global_process_group_ray -> torch.distributed.init_process_group(backend="nccl")).
FIRST_GPU_CALL_FAILURE = "RuntimeError: Distributed package doesn't have NCCL built in"
#: 8 train tasks (one step of 8 tasks) and 1 held-out task of the frozen splits: a quick parquet.
TRAIN_TASKS = ["fix-stats-script", "count-log-levels", "csv-to-json-summary", "log-errors-per-hour",
               "extract-unique-emails", "top-client-ips", "slow-requests", "exception-report"]
VAL_TASKS = ["make-project-tree"]
REHEARSAL_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def verl_launch_python() -> str:
    """The venv's interpreter (built by scripts/setup.sh through setup_verl_check_venv.sh; stamp-checked here)."""
    done = subprocess.run(["bash", str(REPO / "scripts" / "setup_verl_launch_venv.sh")], capture_output=True,
                          text=True, timeout=1200)
    if done.returncode != 0:
        message = f"no verl launch venv (bash scripts/setup_verl_launch_venv.sh: {done.stderr.strip()[-500:]})"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.serial  # the launch sweeps leaked sandboxes of dead runs on this machine, as a real launch does
def test_verl_1gpu_launch_runs_on_cpu_up_to_the_first_gpu_call(tmp_path, verl_launch_python):
    ray_dir = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's socket paths must stay short
    words = [
        "verl_1gpu", "--rehearse", f"trainer.output_dir={tmp_path}", "trainer.val_before_train=false",
        f"data.task_ids=[{','.join(TRAIN_TASKS + VAL_TASKS)}]",
        # raw verl keys: no dataloader worker processes, no dashboard, Ray's files in a private directory
        "data.dataloader_num_workers=0", "+ray_kwargs.ray_init.include_dashboard=false",
        f"+ray_kwargs.ray_init._temp_dir={ray_dir}",
    ]
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src"), "RAY_DEDUP_LOGS": "0"}
    environment.pop("RAY_ADDRESS", None)
    process = subprocess.Popen([verl_launch_python, str(SCRIPT), *words], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=environment, cwd=REPO, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=REHEARSAL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the launcher's own session: its Ray processes go with it
        output, _ = process.communicate()
        pytest.fail(f"the rehearsal ran past {REHEARSAL_TIMEOUT_S} s:\n{output[-4000:]}")
    finally:
        shutil.rmtree(ray_dir, ignore_errors=True)
    tail = output[-6000:]
    # the end it expects, reported by the CLI, and where it came from
    assert process.returncode == 3, tail
    assert (f"rehearsal stopped in ray::WorkerDict.actor_rollout_init_model() (RayTaskError(RuntimeError)): "
            f"{FIRST_GPU_CALL_FAILURE}") in output, tail
    assert "in initialize_global_process_group_ray" in output and "torch.distributed.init_process_group(" in output
    # every stage before it ran
    run_dir = tmp_path / "verl_1gpu"
    dry_run = yaml.safe_load((run_dir / "launch" / "dry_run.yaml").read_text())
    assert dry_run["level2"]["ran"] is True and dry_run["level2"]["verl"] == "0.9.1"
    assert dry_run["hydra_key_sources"]["data.dataloader_num_workers"] == "command line"
    train = pandas.read_parquet(run_dir / "data" / "train.parquet")
    assert sorted(info["task_id"] for info in train["extra_info"]) == sorted(TRAIN_TASKS)
    assert len(pandas.read_parquet(run_dir / "data" / "val.parquet")) == len(VAL_TASKS)
    assert "Started a local Ray instance" in output
    assert "Size of train dataloader: 1, Size of val dataloader: 1" in output  # verl read our parquet
    assert "Total training steps: 21" in output
    assert "No available node types can fulfill" not in output  # the fake GPU's CPUs were there too
