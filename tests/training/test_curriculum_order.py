"""The easy-to-hard curriculum order (``local.curriculum``) and the learning experiment's reuse of
finished evaluations: pure functions over task lists, no model or sandbox."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.training.experiments.local_experiment import EVALUATION_SETTINGS, evaluation_settings, finished_evaluation
from terminal_agent.training.local.checkpoints import TaskOrder
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.trainer import task_order_of
from terminal_agent.training.preset_config import load_preset

DIFFICULTIES = ["hard", "easy", "medium", "easy", "hard", "medium", "easy", "odd"]  # "odd" counts as medium


def test_curriculum_opens_levels_in_order_then_draws_every_task():
    order = TaskOrder.easy_to_hard(DIFFICULTIES, seed=5, opening_draws=12)
    easy = {i for i, d in enumerate(DIFFICULTIES) if d == "easy"}
    up_to_medium = easy | {i for i, d in enumerate(DIFFICULTIES) if d in ("medium", "odd")}
    first, second, rest = order.next_batch(6), order.next_batch(6), order.next_batch(16)
    assert set(first) <= easy and set(first) == easy  # two cycles of the 3 easy tasks
    assert set(second) <= up_to_medium and set(second) - easy  # medium opens in the second half
    assert set(rest) == set(range(len(DIFFICULTIES)))  # two full cycles: every task, hard ones included
    assert sorted(rest[:8]) == list(range(8))  # a permutation per cycle


def test_curriculum_resumes_bitwise_and_depends_on_the_seed():
    straight = TaskOrder.easy_to_hard(DIFFICULTIES, seed=5, opening_draws=12)
    reference = [straight.next_batch(3) for _ in range(8)]
    first = TaskOrder.easy_to_hard(DIFFICULTIES, seed=5, opening_draws=12)
    head = [first.next_batch(3) for _ in range(3)]
    state = json.loads(json.dumps(first.state_dict()))  # a checkpoint stores it as JSON
    resumed = TaskOrder.from_state(state)
    assert resumed.peek_batch(3) == reference[3]
    assert head + [resumed.next_batch(3) for _ in range(5)] == reference
    other = TaskOrder.easy_to_hard(DIFFICULTIES, seed=6, opening_draws=12)
    assert [other.next_batch(3) for _ in range(8)] != reference


def test_one_level_or_no_opening_is_a_plain_draw_of_every_task():
    same = TaskOrder.easy_to_hard(["easy"] * 4, seed=1, opening_draws=8)
    assert sorted(same.next_batch(4)) == [0, 1, 2, 3]
    at_once = TaskOrder.easy_to_hard(DIFFICULTIES, seed=1, opening_draws=0)
    assert sorted(at_once.next_batch(8)) == list(range(8))
    with pytest.raises(ValueError, match="2 curriculum levels for 3 tasks"):
        TaskOrder(3, seed=0, levels=[0, 1])


def test_the_preset_key_sets_the_trainers_order():
    tasks = [SimpleNamespace(difficulty=d) for d in DIFFICULTIES]
    preset = load_preset("local_cpu_smoke", ["local.curriculum=easy_to_hard", "local.curriculum_share=0.5", "local.steps=6",
                                             "batch.train_batch_size=2", "batch.ppo_mini_batch_size=2"])
    config = LocalTrainingConfig.from_preset(preset)
    order = task_order_of(tasks, config)
    assert order.opening_draws == 3 * config.tasks_per_step
    assert {DIFFICULTIES[i] for i in order.next_batch(order.opening_draws // 2)} == {"easy"}
    plain = task_order_of(tasks, LocalTrainingConfig.from_preset(load_preset("local_cpu_smoke")))
    assert plain.levels is None
    with pytest.raises(ConfigError, match="local.curriculum"):
        LocalTrainingConfig.from_preset(load_preset("local_cpu_smoke", ["local.curriculum=hard_first"]))


def test_a_finished_evaluation_is_reused_only_with_the_same_settings(tmp_path):
    config = LocalTrainingConfig()
    tasks = [SimpleNamespace(task_id=t) for t in ("b", "a")]
    kwargs = dict(attempts=4, max_steps=4, max_tokens=256, temperature=0.6, concurrency=64)
    settings = evaluation_settings(config, tasks, None, **kwargs)
    assert settings["tasks"] == ["a", "b"] and settings["adapter"] is None
    assert finished_evaluation(tmp_path, settings) is None  # nothing there
    (tmp_path / "results.json").write_text("{}")
    assert finished_evaluation(tmp_path, settings) is None  # results without the marker: cut short
    (tmp_path / EVALUATION_SETTINGS).write_text(json.dumps(settings))
    assert finished_evaluation(tmp_path, settings) == tmp_path / "results.json"
    other = evaluation_settings(config, tasks, tmp_path / "step_60", **{**kwargs, "attempts": 2})
    assert finished_evaluation(tmp_path, other) is None
    (tmp_path / EVALUATION_SETTINGS).write_text('{"model": ')  # a marker cut short by a kill
    assert finished_evaluation(tmp_path, settings) is None
