"""The learning experiment over seeds: the pooled bootstrap (tasks resampled within seeds) on per-task
results with known effects, the split of held-out task ids into family instances and hand-written
tasks, skipping a finished seed (with a warm start's comparisons), and ``--seeds 0,1`` end to end on the
embedded model (the smallest shape, no warm start)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from local_helpers import shipped_tasks
from terminal_agent.errors import ConfigError
from terminal_agent.evaluation.pooled_bootstrap import ALL_TASKS, stratified_paired_bootstrap
from terminal_agent.evaluation.results import RunInfo, RunResults, TrialResult
from terminal_agent.evaluation.stats import paired_bootstrap
from terminal_agent.tasks.families import FAMILIES, generate_instances, get_family
from terminal_agent.training.experiments.seed_experiment import (
    EVAL_DIRS,
    FAMILY_GROUP,
    HAND_WRITTEN_GROUP,
    check_task_groups,
    experiment_settings,
    family_of_task_id,
    parse_seeds,
    run_seed_experiments,
    seed_dir,
    training_trend,
)
from terminal_agent.training.local.config import LocalTrainingConfig

REPO = Path(__file__).resolve().parents[2]
N_BOOT = 2000


def seeded_pair(effect_of, *, seeds=3, tasks=12, attempts=2):
    """Per seed: A's per-task values (random in [0, 0.5]) and B's = A's + ``effect_of(seed, task)``."""
    rng = np.random.default_rng(7)
    a, b = {}, {}
    for s in range(seeds):
        a[str(s)], b[str(s)] = {}, {}
        for t in range(tasks):
            base = rng.uniform(0, 0.5, size=attempts)
            a[str(s)][f"task-{t}"] = base.tolist()
            b[str(s)][f"task-{t}"] = (base + effect_of(s, t)).tolist()
    return a, b


def test_a_constant_effect_gives_an_interval_around_it():
    exact = stratified_paired_bootstrap(*seeded_pair(lambda s, t: 0.5), n_boot=N_BOOT)
    assert exact.n_seeds == 3 and exact.n_pairs == 36 and exact.tasks_per_seed == {"0": 12, "1": 12, "2": 12}
    assert exact.difference == pytest.approx(0.5)
    assert exact.ci_low == pytest.approx(0.5) and exact.ci_high == pytest.approx(0.5)
    # +0.5 on average, +-0.2 from task to task (mean exactly 0.5 within each seed)
    noisy = stratified_paired_bootstrap(*seeded_pair(lambda s, t: 0.5 + (0.2 if t % 2 else -0.2)), n_boot=N_BOOT)
    assert noisy.difference == pytest.approx(0.5)
    assert 0.4 < noisy.ci_low < 0.5 < noisy.ci_high < 0.6
    assert noisy.prob_improvement == 1.0


def test_zero_effect_gives_an_interval_containing_zero():
    pooled = stratified_paired_bootstrap(*seeded_pair(lambda s, t: 0.3 if t % 2 else -0.3), n_boot=N_BOOT)
    assert pooled.difference == pytest.approx(0.0, abs=1e-12)
    assert pooled.ci_low < 0.0 < pooled.ci_high
    assert 0.3 < pooled.prob_improvement < 0.7


def test_resampling_never_mixes_seeds():
    # seed 0 gains 0 or 0.1 per task, seed 1 gains 10 or 10.1: a resample within seeds keeps each seed's
    # 10 tasks, so every resampled mean lies in [5.0, 5.1]; resampling across seeds would not
    a, b = seeded_pair(lambda s, t: 10.0 * s + (0.1 if t % 2 else 0.0), seeds=2, tasks=10)
    pooled = stratified_paired_bootstrap(a, b, n_boot=N_BOOT)
    assert pooled.difference == pytest.approx(5.05)
    assert 5.0 - 1e-9 <= pooled.ci_low < pooled.ci_high <= 5.1 + 1e-9
    flat_a = {f"{s}/{t}": v for s in a for t, v in a[s].items()}
    flat_b = {f"{s}/{t}": v for s in b for t, v in b[s].items()}
    unstratified = paired_bootstrap(flat_a, flat_b, n_boot=N_BOOT)
    assert unstratified.difference == pytest.approx(5.05)
    assert unstratified.ci_high - unstratified.ci_low > 2.0


def test_one_seed_is_that_seeds_paired_bootstrap():
    a, b = seeded_pair(lambda s, t: 0.1 * (t % 3) - 0.05, seeds=1, tasks=9)
    b["0"].pop("task-4")  # a task scored in one run only is left out, as paired_bootstrap does
    pooled = stratified_paired_bootstrap(a, b, n_boot=N_BOOT, seed=3)
    single = paired_bootstrap(a["0"], b["0"], n_boot=N_BOOT, seed=3)
    assert pooled.n_pairs == single.n_tasks == 8
    for key in ("mean_a", "mean_b", "difference", "ci_low", "ci_high", "prob_improvement"):
        assert getattr(pooled, key) == pytest.approx(getattr(single, key), abs=1e-12), key


def test_family_instances_and_hand_written_tasks_are_told_apart():
    for name in FAMILIES:
        split = "held_out" if get_family(name).held_out_family else "train"
        (instance,) = generate_instances(name, 1, 0, split=split)
        assert family_of_task_id(instance.task_id) == name == instance.metadata["family"]
    hand_written = shipped_tasks("fix-stats-script")
    assert family_of_task_id(hand_written[0].task_id) is None
    assert family_of_task_id("gen-no-such-family-0123456789") is None
    assert family_of_task_id("gen-count-matches-not-hex-id") is None
    check_task_groups(hand_written + generate_instances("git-recover", 2, 0, split="held_out"))
    named_like_an_instance = hand_written[0].model_copy(update={"task_id": "gen-count-matches-0123456789"})
    with pytest.raises(ConfigError, match="gen-count-matches-0123456789"):
        check_task_groups([named_like_an_instance])


def test_seeds_are_parsed_strictly():
    assert parse_seeds("0,1, 2") == [0, 1, 2]
    for bad in ("", "0,,1", "-1", "0,a", "1,1"):
        with pytest.raises(ConfigError, match="--seeds"):
            parse_seeds(bad)


def write_eval(directory: Path, model: str, rewards: dict[str, list[float]]) -> None:
    trials = [TrialResult(task_id=task, attempt=i, status="scored", reward=r)
              for task, values in rewards.items() for i, r in enumerate(values)]
    RunResults(run=RunInfo(run_id=model, model=model, attempts=2, finished_at="done"), trials=trials).write(
        directory / "results.json")


def test_a_finished_seed_is_skipped_and_every_seed_directory_is_pooled(tmp_path):
    family = generate_instances("git-recover", 2, 0, split="held_out")
    hand_written = shipped_tasks("fix-stats-script")
    held_out = family + hand_written
    train = generate_instances("count-matches", 1, 0, split="train")
    config = LocalTrainingConfig(steps=60, wandb=False)
    # seeds 0 and 1 finished earlier (seed 1 with fewer steps); seed 2 was stopped before its evaluations
    for seed, steps in ((0, 60), (1, 20)):
        directory = seed_dir(tmp_path, seed)
        gain = 0.5 + 0.1 * seed
        write_eval(directory / EVAL_DIRS["base"], "base", {t.task_id: [0.0, 0.2] for t in held_out})
        write_eval(directory / EVAL_DIRS["warm_start"], "warm", {t.task_id: [0.1, 0.3] for t in held_out})
        # the trained model gains on the family instances only
        write_eval(directory / EVAL_DIRS["trained"], "trained",
                   {t.task_id: [gain, gain + 0.2] if "family" in t.metadata else [0.0, 0.2] for t in held_out})
        (directory / "comparison.json").write_text("{}")
        settings = experiment_settings(config.model_copy(update={"seed": seed, "steps": steps}), train, held_out,
                                       attempts=2, temperature=0.6)
        (directory / "experiment.json").write_text(json.dumps(settings))
    seed_dir(tmp_path, 2).mkdir()
    untouched = (seed_dir(tmp_path, 0) / "eval_trained" / "results.json").read_bytes()

    result = run_seed_experiments(config, train, held_out, tmp_path, seeds=[0, 1], eval_attempts=2, n_boot=N_BOOT)

    assert result.experiments == {}  # nothing trained or evaluated
    assert (seed_dir(tmp_path, 0) / "eval_trained" / "results.json").read_bytes() == untouched
    assert result.skipped[0] == {}
    assert result.skipped[1] == {"config.steps": {"recorded": 20, "now": 60}}
    document = json.loads((tmp_path / "pooled.json").read_text())
    assert document["seeds"] == ["0", "1"] and document["unfinished_seeds"] == [2]
    assert document["settings_differences"] == {"config.steps": {"0": 60, "1": 20}}
    groups = document["groups"]
    assert list(groups) == [ALL_TASKS, FAMILY_GROUP, HAND_WRITTEN_GROUP]
    assert groups[FAMILY_GROUP]["tasks"]["0"] == sorted(t.task_id for t in family)
    assert groups[HAND_WRITTEN_GROUP]["tasks"]["1"] == ["fix-stats-script"]
    trained = groups[FAMILY_GROUP]["comparisons"]["trained_vs_base"]["reward"]
    assert trained["per_seed"]["0"]["difference"] == pytest.approx(0.5)
    assert trained["per_seed"]["1"]["difference"] == pytest.approx(0.6)
    assert trained["pooled"]["difference"] == pytest.approx(0.55) and trained["pooled"]["n_pairs"] == 4
    assert groups[HAND_WRITTEN_GROUP]["comparisons"]["trained_vs_base"]["reward"]["pooled"]["difference"] == 0.0
    grpo = groups[ALL_TASKS]["comparisons"]["trained_vs_warm_start"]["pass"]["pooled"]
    assert grpo["n_pairs"] == 6 and grpo["difference"] == 0.0  # nothing reaches reward 1
    assert set(groups[ALL_TASKS]["comparisons"]) == {"trained_vs_base", "trained_vs_warm_start", "warm_start_vs_base"}
    markdown = (tmp_path / "pooled.md").read_text()
    assert f"## {FAMILY_GROUP}" in markdown and f"## {HAND_WRITTEN_GROUP}" in markdown
    assert "GRPO's own effect" in markdown and "**+0.550 [" in markdown
    assert "seed_2" in markdown and "config.steps" in markdown
    assert document["training"] == {"0": None, "1": None}  # these seed directories kept no training metrics
    assert "| 0 | no metrics |" in markdown


def _metrics_line(step, reward, passed, *, stepped=1, kept=4):
    return json.dumps({"step": step, "rollout/reward_mean": reward, "rollout/pass_rate": passed,
                       "update/stepped": stepped, "update/skipped_steps": 1 - stepped,
                       "batch/groups_kept": kept, "batch/groups": 8})


def test_the_training_trend_averages_the_first_and_last_steps_and_a_redone_step_counts_once(tmp_path):
    lines = [_metrics_line(s, 0.1, 0.0) for s in range(1, 4)]
    lines.append(_metrics_line(3, 0.9, 0.5))  # step 3 redone after a resume: its last record counts
    lines.append("{not json")  # a torn line of a killed run is skipped
    lines += [_metrics_line(s, 0.4, 0.25, stepped=0 if s == 6 else 1) for s in range(4, 7)]
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "metrics.jsonl").write_text("\n".join(lines) + "\n")

    trend = training_trend(tmp_path, window=3)

    assert trend["steps"] == 6 and trend["first_steps"] == [1, 3] and trend["last_steps"] == [4, 6]
    assert trend["reward"]["first"] == pytest.approx((0.1 + 0.1 + 0.9) / 3)
    assert trend["reward"]["last"] == pytest.approx(0.4) and trend["pass"]["first"] == pytest.approx(0.5 / 3)
    assert trend["optimizer_steps"] == 5 and trend["skipped_steps"] == 1
    assert trend["groups_kept"] == 24 and trend["groups"] == 48
    stored = tmp_path / "stored"  # a stored copy keeps metrics.jsonl beside the evaluations
    stored.mkdir()
    (stored / "metrics.jsonl").write_text((tmp_path / "train" / "metrics.jsonl").read_text())
    assert training_trend(stored, window=3) == trend
    assert training_trend(tmp_path / "nothing-here") is None


@pytest.mark.docker
@pytest.mark.model
@pytest.mark.slow
def test_seeds_0_and_1_end_to_end(docker_client, tmp_path):
    from terminal_agent.tasks.csv.format import write_tasks_csv

    train = generate_instances("count-matches", 1, 1, split="train", difficulties=["easy"])
    held_out = generate_instances("count-matches", 1, 2, split="held_out", difficulties=["easy"]) + shipped_tasks(
        "fix-stats-script")
    write_tasks_csv(train, tmp_path / "train.csv")
    write_tasks_csv(held_out, tmp_path / "held.csv")
    out = tmp_path / "out"
    command = [
        sys.executable, str(REPO / "training_scripts" / "local_learning_experiment.py"), "local_cpu_smoke",
        "--tasks", str(tmp_path / "train.csv"), "--held-out", str(tmp_path / "held.csv"), "--out", str(out),
        "--seeds", "0,1", "--eval-attempts", "1", "--eval-concurrency", "2",
        "local.steps=1", "rollout.n=2", "agent.max_turns=1", "agent.parallel_episodes=2",
        "lengths.max_response_length_per_turn=16", "local.sft_warm_start.enabled=false", "trainer.loggers=[console]",
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-4000:]

    for seed in (0, 1):
        directory = seed_dir(out, seed)
        assert json.loads((directory / "experiment.json").read_text())["config"]["seed"] == seed
        assert not (directory / EVAL_DIRS["warm_start"]).exists()  # no warm start: base and trained only
        for model in ("base", "trained"):
            run = RunResults.read(directory / EVAL_DIRS[model])
            assert sorted(t.task_id for t in run.trials) == sorted(t.task_id for t in held_out), model
    document = json.loads((out / "pooled.json").read_text())
    assert document["seeds"] == ["0", "1"] and document["settings_differences"] == {}
    assert document["groups"][FAMILY_GROUP]["tasks"]["1"] == [held_out[0].task_id]
    assert document["groups"][HAND_WRITTEN_GROUP]["tasks"]["0"] == ["fix-stats-script"]
    comparisons = document["groups"][ALL_TASKS]["comparisons"]
    assert list(comparisons) == ["trained_vs_base"]  # the warm-start comparisons need a warm start
    assert comparisons["trained_vs_base"]["reward"]["pooled"]["tasks_per_seed"] == {"0": 2, "1": 2}
    assert set(comparisons["trained_vs_base"]["pass"]["per_seed"]) == {"0", "1"}
    assert "The learning experiment over seeds" in proc.stdout
    behaviour = (seed_dir(out, 0) / "comparison.md").read_text().split("### Behaviour on the held-out tasks", 1)
    assert len(behaviour) == 2 and "base" in behaviour[1] and "trained" in behaviour[1]  # eval behaviour's tables
    # the base model is the same for both seeds: only the seed (torch's, set by load_policy) makes their
    # sampled replies differ; with the seed not passed on, both would sample from the same seed source
    def base_replies(seed):
        transcripts = sorted((seed_dir(out, seed) / EVAL_DIRS["base"] / "transcripts").glob("*/attempt-0.json"))
        return [json.loads(path.read_text())["model_calls"][0]["response"]["text"] for path in transcripts]

    assert len(base_replies(0)) == 2 and base_replies(0) != base_replies(1)
