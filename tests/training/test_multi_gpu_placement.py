"""Issue 39 without a multi-GPU machine: the placement plan and batch arithmetic ``--dry-run`` prints for every
shipped preset (1 to 32 GPUs), the refusal of arithmetic that does not divide, and NVLink multicast kept off in
the launcher's environment and in the Ray runtime_env its workers get (rLLM's own runtime env, from its wheel,
merged under ours)."""

from __future__ import annotations

import os
import subprocess
import sys
import types
import zipfile
from pathlib import Path

import pytest
import yaml

from terminal_agent.errors import ConfigError
from terminal_agent.training import launcher
from terminal_agent.training.preset_config import load_preset, preset_names
from terminal_agent.training.verl import worker_environment
from terminal_agent.training.verl.geometry_checks import verl_placement
from terminal_agent.training.verl.preset_sections import verl_preset

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training_scripts" / "launch_training.py"
MULTICAST_ON = {"NCCL_NVLS_ENABLE": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "0", "NVSHMEM_DISABLE_NVLS": "false"}


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src"), **(env or {})}
    environment.pop("TERMINAL_AGENT_VERL_PYTHON", None)
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--skip-level2"], capture_output=True, text=True,
                          env=environment, timeout=300, cwd=REPO)


@pytest.fixture
def clean_multicast_env(monkeypatch):
    """The three switches unset in this process, as on a fresh shell (the launch sets them itself)."""
    for name in worker_environment.NVLINK_MULTICAST_OFF:
        monkeypatch.delenv(name, raising=False)


def dry_run_placement(name: str, output_dir: Path, *overrides: str) -> dict:
    plan = launcher.plan_launch(load_preset(name, [f"trainer.output_dir={output_dir}", *overrides]), level2=False)
    return launcher.dry_run_document(plan)


# --- the placement plan ------------------------------------------------------------------------------
def test_dry_run_prints_a_placement_plan_for_every_shipped_preset(tmp_path, verl_schema_sources,
                                                                  clean_multicast_env, capsys):
    gpu_counts = set()
    for name in preset_names():
        document = dry_run_placement(name, tmp_path)
        placement = document["placement"]
        with capsys.disabled():
            print(f"\n--- {name}\n" + yaml.safe_dump(placement, sort_keys=False, width=120), end="")
        assert placement["backend"] == document["preset"]["backend"]
        assert placement["sandboxes"]["parallel_episodes"] == document["preset"]["agent"]["parallel_episodes"]
        if placement["backend"] != "verl":
            assert "gpus" not in placement and document["nvlink_multicast_off"] is None
            continue
        gpus, batch = placement["gpus"], placement["batch"]
        gpu_counts.add(gpus["total_gpus"])
        assert gpus["actor_fsdp_world_size"] == gpus["total_gpus"] == gpus["nodes"] * gpus["gpus_per_node"]
        assert gpus["rollout_replicas"] * gpus["rollout_tensor_parallel"] == gpus["total_gpus"]
        assert batch["rows_per_gpu"] * gpus["total_gpus"] == batch["rows_per_step"]
        assert (batch["micro_batches_per_mini_batch"] * batch["micro_batch_size_per_gpu"] * gpus["data_parallel_ranks"]
                == batch["mini_batch_rows"])
        assert document["nvlink_multicast_off"] == worker_environment.NVLINK_MULTICAST_OFF
    assert gpu_counts >= {1, 2, 4, 8, 16, 32}


def test_placement_numbers_of_the_2_and_8_gpu_presets(tmp_path, verl_schema_sources, clean_multicast_env):
    small = dry_run_placement("test_8b_2_gpus", tmp_path)["placement"]
    assert small["gpus"] == {"nodes": 1, "gpus_per_node": 2, "total_gpus": 2, "actor_fsdp_world_size": 2,
                             "sequence_parallel": 2, "data_parallel_ranks": 1, "rollout_tensor_parallel": 1,
                             "rollout_replicas": 2}
    assert small["batch"] == {"train_batch_size": 4, "rollout_n": 4, "rows_per_step": 16, "rows_per_gpu": 8,
                              "ppo_mini_batch_size": 2, "optimizer_steps_per_step": 2, "mini_batch_rows": 8,
                              "mini_batch_rows_per_rank": 8, "micro_batch_size_per_gpu": 1,
                              "micro_batches_per_mini_batch": 8}
    assert small["sandboxes"]["backend"] == "docker" and "driver's node" in small["sandboxes"]["where"]

    prod = dry_run_placement("prod_32b_8_gpus", tmp_path)["placement"]
    assert prod["gpus"] == {"nodes": 1, "gpus_per_node": 8, "total_gpus": 8, "actor_fsdp_world_size": 8,
                            "sequence_parallel": 4, "data_parallel_ranks": 2, "rollout_tensor_parallel": 4,
                            "rollout_replicas": 2}
    assert prod["batch"] == {"train_batch_size": 8, "rollout_n": 8, "rows_per_step": 64, "rows_per_gpu": 8,
                             "ppo_mini_batch_size": 4, "optimizer_steps_per_step": 2, "mini_batch_rows": 32,
                             "mini_batch_rows_per_rank": 16, "micro_batch_size_per_gpu": 1,
                             "micro_batches_per_mini_batch": 16}


def test_ray_sandbox_hosts_are_placed_beside_the_gpu_workers(tmp_path, verl_schema_sources, clean_multicast_env):
    sandboxes = dry_run_placement("prod_32b_2x8_h100", tmp_path)["placement"]["sandboxes"]
    assert sandboxes["backend"] == "ray" and sandboxes["planned_slots"] == 2 * 80
    assert "SandboxHost Ray actor per node" in sandboxes["where"] and "beside verl's GPU workers" in sandboxes["where"]


def test_a_train_batch_not_divisible_by_the_gpus_is_refused_naming_the_keys(tmp_path):
    """9 rows (3 tasks x 3 episodes) on 2 GPUs: the user's path exits 2 naming every key of the product."""
    done = run_script("test_8b_2_gpus", f"trainer.output_dir={tmp_path}", "batch.train_batch_size=3",
                      "batch.ppo_mini_batch_size=1", "rollout.n=3", "--dry-run")
    assert done.returncode == 2, done.stderr
    message = " ".join(done.stderr.split())
    for key in ("batch.train_batch_size", "rollout.n", "cluster.nodes", "cluster.gpus_per_node"):
        assert key in message, message
    assert "= 9 episodes" in message and "= 2 GPUs" in message
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing started


def test_a_micro_batch_that_does_not_divide_the_rank_share_is_refused():
    """prod_32b_8_gpus: 16 rows per data-parallel rank per mini batch; micro batches of 3 do not divide them."""
    preset = load_preset("prod_32b_8_gpus", ["batch.micro_batch_size_per_gpu=3"])
    with pytest.raises(ConfigError, match=r"batch\.micro_batch_size_per_gpu.*16 episodes per rank") as refused:
        verl_placement(verl_preset(preset))
    assert "batch.ppo_mini_batch_size x rollout.n" in str(refused.value)


# --- NVLink multicast off ------------------------------------------------------------------------------
def rllm_head_wheel() -> Path | None:
    """rLLM HEAD's wheel in the ``shared/wheels`` folder beside the repo (or a parent's)."""
    for parent in [REPO, *REPO.parents]:
        found = sorted((parent / "shared" / "wheels").glob("rllm-0.3.0*.whl"))
        if found:
            return found[-1]
    return None


def rllm_ppo_runtime_env() -> dict:
    """rLLM HEAD's ``get_ppo_ray_runtime_env()`` (what the launch passes as ``base``), loaded from its wheel."""
    wheel = rllm_head_wheel()
    if wheel is None:
        message = "the rLLM HEAD wheel (shared/wheels/rllm-0.3.0*.whl) is not beside the repo"
        pytest.fail(message) if os.environ.get("CI") == "true" else pytest.skip(message)
    pytest.importorskip("ray")
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read("rllm/trainer/verl/ray_runtime_env.py").decode()
    module = types.ModuleType("rllm_ray_runtime_env_reference")
    exec(compile(source, f"{wheel.name}/rllm/trainer/verl/ray_runtime_env.py", "exec"), module.__dict__)
    return module.get_ppo_ray_runtime_env()


def test_the_switches_reach_the_workers_runtime_env_merged_with_rllms(clean_multicast_env, monkeypatch):
    monkeypatch.setenv("NCCL_IB_DISABLE", "1")  # rLLM forwards NCCL_*; it must survive the merge
    base = rllm_ppo_runtime_env()
    assert "NVSHMEM_DISABLE_NVLS" not in base["env_vars"]  # rLLM alone does not forward NVSHMEM_*
    preset = load_preset("prod_32b_8_gpus", ["runtime_env.env_vars.TORCH_SYMM_MEM_DISABLE_MULTICAST='true'"])
    worker_environment.require_multicast_off(preset)  # 'true' keeps it off: accepted
    env_vars = worker_environment.ray_runtime_env(preset, base)["env_vars"]
    print("ray runtime_env env_vars:", {name: env_vars[name] for name in sorted(env_vars) if "LLM" not in name})
    for name, value in worker_environment.NVLINK_MULTICAST_OFF.items():
        assert env_vars[name] == value
        assert worker_environment.run_environment(preset)[name] == value  # the launcher's own os.environ.update
    assert env_vars["NCCL_CUMEM_ENABLE"] == "0" and env_vars["NCCL_IB_DISABLE"] == "1"  # rLLM's, kept
    assert "NCCL_NVLS_ENABLE" not in base["env_vars"]  # rLLM's dict is not changed
    # a local run has no Ray workers and no runtime_env at all (its backend's multicast_switches are empty)


@pytest.mark.parametrize("name, value", sorted(MULTICAST_ON.items()))
def test_an_environment_that_turns_multicast_on_is_refused(name, value):
    preset = load_preset("prod_32b_8_gpus")
    with pytest.raises(ConfigError, match=f"{name}='{value}' \\(in the environment\\) turns NVLink multicast on"):
        worker_environment.require_multicast_off(preset, {name: value})
    worker_environment.require_multicast_off(preset, {name: worker_environment.NVLINK_MULTICAST_OFF[name]})  # the off value passes
    with pytest.raises(ConfigError, match=f"runtime_env.env_vars.{name}='{value}' \\(in the preset\\)"):
        worker_environment.require_multicast_off(load_preset("prod_32b_8_gpus", [f"runtime_env.env_vars.{name}='{value}'"]), {})


def test_the_dry_run_lists_the_switches_and_refuses_multicast_on(tmp_path):
    done = run_script("prod_32b_8_gpus", f"trainer.output_dir={tmp_path}", "--dry-run",
                      env={"NCCL_NVLS_ENABLE": "0"})
    assert done.returncode == 0, done.stderr
    document = yaml.safe_load(done.stdout)
    assert document["nvlink_multicast_off"] == worker_environment.NVLINK_MULTICAST_OFF
    for name, value in worker_environment.NVLINK_MULTICAST_OFF.items():
        assert document["ray_runtime_env"]["env_vars"][name] == value
    refused = run_script("prod_32b_8_gpus", f"trainer.output_dir={tmp_path / 'on'}", "--dry-run",
                         env={"NCCL_NVLS_ENABLE": "1"})
    assert refused.returncode == 2
    assert "NCCL_NVLS_ENABLE='1'" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "on").exists()
