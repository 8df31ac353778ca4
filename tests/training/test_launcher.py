"""launch_training.py and the launcher: exit 2 on bad input with nothing started, a redacted dry
run saved in the run directory, real parquet, the Ray runtime_env that ships our package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from terminal_agent.errors import ConfigError, TrainingSetupError
from terminal_agent.training import launch_environment, launcher, redaction
from terminal_agent.training.local.backend import LOCAL_TRAINER_PATH, LocalPlan
from terminal_agent.training.preset_config import load_preset
from terminal_agent.training.verl import data_files, machine_checks
from terminal_agent.training.verl import launch as verl_launch
from terminal_agent.training.verl import worker_environment

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training_scripts" / "launch_training.py"
SECRETS = {"LITE_LLM_API_KEY": "sk-test-0123456789abcdef", "WANDB_API_KEY": "wandb-secret-4242424242",
           "HF_TOKEN": "hf_TopSecretTokenValue"}


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src"), **(env or {})}
    environment.pop("TERMINAL_AGENT_VERL_PYTHON", None)  # level 2 is tested in test_presets
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--skip-level2"], capture_output=True, text=True,
                          env=environment, timeout=300, cwd=REPO)


def test_dry_run_prints_and_saves_the_launch_with_secrets_redacted(tmp_path, verl_schema_sources):
    done = run_script("prod_32b_8_gpus", f"trainer.output_dir={tmp_path}", "rollout.n=16", "--dry-run",
                      env={**SECRETS, "LITE_LLM_API_BASE": "https://judge-user:hunter2hunter2@judge.example/v1"})
    assert done.returncode == 0, done.stderr
    saved_dir = tmp_path / "prod_32b_8_gpus" / "launch"
    saved = (saved_dir / "dry_run.yaml").read_text()
    composed = (saved_dir / "trainer_config.yaml").read_text()
    for text in (done.stdout, done.stderr, saved, composed):
        for secret in [*SECRETS.values(), "hunter2hunter2"]:
            assert secret not in text
    document = yaml.safe_load(done.stdout)
    assert document == yaml.safe_load(saved)
    env_vars = document["ray_runtime_env"]["env_vars"]
    assert env_vars["LITE_LLM_API_KEY"] == env_vars["HF_TOKEN"] == redaction.REDACTED
    assert env_vars["LITE_LLM_API_BASE"] == f"https://{redaction.REDACTED}@judge.example/v1"
    assert env_vars["WANDB_MODE"] == "offline"
    assert "actor_rollout_ref.rollout.n=16" in document["hydra_overrides"]
    assert "actor_rollout_ref.actor.optim.clip_grad=1.0" in document["hydra_overrides"]
    assert "algorithm.adv_estimator='grpo'" in document["hydra_overrides"]
    assert not (tmp_path / "prod_32b_8_gpus" / "data").exists()  # a dry run converts nothing
    assert yaml.safe_load(composed)["actor_rollout_ref"]["rollout"]["max_model_len"] == 32768


@pytest.mark.parametrize("args, names", [
    (["batch.trian_batch_size=4"], "batch.trian_batch_size"),
    (["rollout.n=abc"], "rollout.n"),
    (["batch.train_batch_size=1", "batch.ppo_mini_batch_size=1", "rollout.n=12"], "batch.train_batch_size"),
    (["agent.compaction=true"], "agent.compaction"),
    (["data.train_files=missing.parquet"], "data.train_files"),
    (["sandbox.env.judge.local.num_threads=0"], "judge.local.num_threads"),  # a section the env reads lazily
])
def test_bad_input_exits_2_naming_the_key_and_starts_nothing(tmp_path, args, names):
    done = run_script("prod_32b_8_gpus", f"trainer.output_dir={tmp_path}", *args)
    assert done.returncode == 2, done.stderr
    assert names in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no run directory: nothing was launched


def test_options_may_come_between_the_preset_and_its_overrides(tmp_path):
    """`PRESET --dry-run KEY=VALUE`, as a user types it: the override is read (and its bad value named), not refused."""
    done = run_script("local_1gpu", "--dry-run", f"trainer.output_dir={tmp_path}", "algorithm.kl_loss_type=kl")
    assert done.returncode == 2, done.stderr
    assert "algorithm.kl_loss_type" in done.stderr and "unrecognized arguments" not in done.stderr
    good = run_script("local_1gpu", "--dry-run", f"trainer.output_dir={tmp_path}", "local.seed=3")
    assert good.returncode == 0, good.stderr
    assert "seed: 3" in good.stdout, good.stdout[-2000:]


def test_unknown_preset_exits_2():
    done = run_script("prod_999_gpus", "--dry-run")
    assert done.returncode == 2 and "unknown preset 'prod_999_gpus'" in done.stderr


def test_list_shows_every_preset():
    done = run_script("--list")
    assert done.returncode == 0
    for name in ("test_8b_2_gpus", "prod_32b_4x8_h100", "local_cpu_smoke"):
        assert name in done.stdout


def test_local_preset_plan_needs_no_verl(tmp_path):
    plan = launcher.plan_launch(load_preset("local_cpu_smoke", [f"trainer.output_dir={tmp_path}"]))
    assert isinstance(plan.backend_part(), LocalPlan)
    document = launcher.dry_run_document(plan)
    assert document["workflow_class"] == LOCAL_TRAINER_PATH
    assert document["preset"]["local"]["device"] == "cpu"


def test_missing_trainer_module_is_a_setup_error_naming_it():
    with pytest.raises(TrainingSetupError, match="terminal_agent.training.no_such_trainer"):
        launch_environment.load_object("terminal_agent.training.no_such_trainer:run", "the local trainer")


def test_redact_keys_values_and_url_passwords():
    secrets = ["s3cr3t-value-xyz"]
    data = {"api_key": "abc123", "prompt_key": "prompt", "max_tokens_per_turn": 4096, "empty_token": "",
            "nested": [{"AUTH_TOKEN": "x" * 10}, "prefix s3cr3t-value-xyz suffix"],
            "url": "postgres://user:pw12345@db:5432/x"}
    out = redaction.redact(data, secrets)
    assert out["api_key"] == redaction.REDACTED and out["nested"][0]["AUTH_TOKEN"] == redaction.REDACTED
    assert out["prompt_key"] == "prompt" and out["max_tokens_per_turn"] == 4096 and out["empty_token"] == ""
    assert out["nested"][1] == f"prefix {redaction.REDACTED} suffix"
    assert out["url"] == f"postgres://{redaction.REDACTED}@db:5432/x"


def test_ray_runtime_env_ships_our_package_and_keeps_rllms_settings(monkeypatch):
    import terminal_agent

    monkeypatch.setenv("LITE_LLM_API_KEY", "sk-abcdefgh")
    monkeypatch.setenv("UNRELATED_VAR", "x")
    base = {"env_vars": {"NCCL_CUMEM_ENABLE": "0"}, "working_dir": None}
    runtime_env = worker_environment.ray_runtime_env(load_preset("prod_32b_8_gpus"), base)
    assert runtime_env["py_modules"] == [str(Path(terminal_agent.__file__).resolve().parent)]
    assert runtime_env["env_vars"]["NCCL_CUMEM_ENABLE"] == "0" and runtime_env["working_dir"] is None
    assert runtime_env["env_vars"]["LITE_LLM_API_KEY"] == "sk-abcdefgh"  # workers need the judge key itself
    assert "UNRELATED_VAR" not in runtime_env["env_vars"]
    assert base["env_vars"] == {"NCCL_CUMEM_ENABLE": "0"}  # rLLM's dict is not changed


def test_launch_writes_real_parquet_with_our_converter(tmp_path, verl_schema_sources):
    from terminal_agent.tasks.parquet.rows import read_parquet

    tasks = REPO / "tests" / "data" / "tb_tasks"
    preset = load_preset("test_8b_2_gpus", [f"data.tasks={tasks}", "data.val_fraction=0",
                                            f"trainer.output_dir={tmp_path}", "batch.train_batch_size=1",
                                            "batch.ppo_mini_batch_size=1", "trainer.total_training_steps=null"])
    plan = launcher.plan_launch(preset, level2=False)
    data_files.write_parquet_files(plan)
    assert plan.backend_part().val_files is None
    written = read_parquet(plan.backend_part().train_files)
    assert [task.task_id for task in written] == ["greet-file"]
    assert plan.backend_part().trainer_config.data.train_files == plan.backend_part().train_files


def test_verl_launch_without_the_train_extra_is_a_setup_error(tmp_path, verl_schema_sources):
    """On this machine (no verl, vLLM or GPUs) a real launch stops before starting anything."""
    if machine_checks._version("verl") is not None:
        pytest.skip("verl is installed here")
    plan = launcher.plan_launch(load_preset("test_8b_2_gpus", [f"trainer.output_dir={tmp_path}"]), level2=False)
    with pytest.raises(TrainingSetupError, match="verl is not installed"):
        launcher.launch(plan)
    assert not (tmp_path / "test_8b_2_gpus" / "data").exists()


def test_sandbox_backend_reaches_the_env_and_an_unknown_one_is_named():
    plan = launcher.plan_launch(load_preset("local_cpu_smoke", ["sandbox.backend=bwrap"]))
    assert plan.workflow_args["env_args"]["sandbox"]["backend"] == "bwrap"
    with pytest.raises(ConfigError, match=r"sandbox\.backend: 'kubernetes' .*valid: .*docker"):
        launcher.plan_launch(load_preset("local_cpu_smoke", ["sandbox.backend=kubernetes"]))


def test_effective_workflow_args_are_what_rllm_passes(verl_schema_sources):
    plan = launcher.plan_launch(load_preset("prod_32b_8_gpus"), level2=False)
    effective = verl_launch.effective_workflow_args(plan.workflow_args, plan.backend_part().trainer_config)
    assert effective["timeout"] == plan.preset.agent.trajectory_timeout_s  # not rLLM's default 1e6
    assert effective["env_args"]["reward"]["test_weight"] == 1.0 and effective["max_tokens_per_turn"] == 4096
    assert {"gamma", "reward_bonus_coeff"} <= set(effective)  # rLLM's Workflow base takes them


def test_a_bad_env_setting_is_named(tmp_path):
    with pytest.raises(ConfigError, match="sandbox.env"):
        launcher.plan_launch(load_preset("local_cpu_smoke", ["sandbox.env.no_such_setting=1"]))
    with pytest.raises(ConfigError, match="pool_size"):
        launcher.plan_launch(load_preset("local_cpu_smoke", ["sandbox.env.sandbox={pool_size: -1}"]))


def _rllm_head_python() -> str | None:
    done = subprocess.run(["bash", str(REPO / "scripts" / "setup_rllm_venvs.sh")], capture_output=True, text=True,
                          cwd=REPO, timeout=900)
    for line in done.stdout.splitlines():
        name, _, python = line.partition(" ")
        if name == "head":
            return python
    return None


@pytest.mark.slow
def test_workflow_args_bind_to_the_real_workflow_under_rllm_head(verl_schema_sources):
    """In the rLLM HEAD venv our Workflow imports, so the plan binds workflow_args to its real signature
    (as rLLM's TaskRunner passes them) and reads rLLM's YAML from the installed package."""
    python = _rllm_head_python()
    if python is None:
        message = "no rLLM HEAD venv (bash scripts/setup_rllm_venvs.sh)"
        pytest.fail(message) if os.environ.get("CI") == "true" else pytest.skip(message)
    code = (
        "from terminal_agent.training.launcher import plan_launch\n"
        "from terminal_agent.training.preset_config import load_preset\n"
        "from terminal_agent.training.verl.schema import rllm_config_source\n"
        "plan = plan_launch(load_preset('prod_32b_8_gpus'), level2=False)\n"
        "assert not [n for n in plan.notes if 'Workflow' in n], plan.notes\n"
        "print(rllm_config_source().origin)\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, env=environment, timeout=300,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().startswith("installed 0.3.0")
