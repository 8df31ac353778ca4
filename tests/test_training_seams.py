"""The seams rLLM HEAD and both trainers rely on, in the main environment (no rLLM installed here).

Real containers and the real env/agent; the rLLM engines themselves run in tests/rllm_conformance.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import docker
import pytest

from terminal_agent.agent import TerminalBenchAgent
from terminal_agent.compat.rllm import step_metadata
from terminal_agent.env import DockerIsolatedEnv
from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.outcome import EpisodeOutcome, Termination, TurnTokens
from terminal_agent.outcome_handoff import HANDOFF_KEY, OutcomeHandoff
from terminal_agent.rollout.episode import run_episode
from terminal_agent.tasks.model import Task
from terminal_agent.tasks.parquet.rows import task_to_flat_dict

TASK = Task(
    task_id="seams-hello",
    instruction="Write hello to /app/hello.txt",
    dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
    test_source=(
        "import os\n\ndef test_dir():\n    assert os.path.isdir('/app')\n\n"
        "def test_hello():\n    assert open('/app/hello.txt').read().strip() == 'hello'\n"
    ),
    test_weights={"test_dir": 1.0, "test_hello": 3.0},
)
OTHER = TASK.model_copy(update={"task_id": "seams-other", "instruction": "Do nothing."})
SOLVE = "<bash>\ncmd: echo hello > /app/hello.txt\n</bash>"
LOOK = "<bash>\ncmd: ls\n</bash>"
FINISH = "<finish>\nmessage: done\n</finish>"


def exists(container_id: str) -> bool:
    try:
        docker.from_env().containers.get(container_id)
        return True
    except docker.errors.NotFound:
        return False


# --- typed records --------------------------------------------------------------------------
def test_termination_classifies_infrastructure_and_parses_strictly():
    assert Termination.for_error_kind("grading") is Termination.GRADING_ERROR
    assert Termination.for_error_kind("nonsense") is Termination.INTERNAL_ERROR
    assert Termination.SANDBOX_ERROR.is_infrastructure and not Termination.MAX_STEPS.is_infrastructure
    with pytest.raises(ValueError, match="valid: finished"):
        Termination.parse("done-ish")


def test_outcome_refuses_a_scored_infrastructure_failure_and_tokens_check_lengths():
    with pytest.raises(ValueError, match="cannot be scored"):
        EpisodeOutcome("t", Termination.SANDBOX_ERROR, scored=True, reward=0.0)
    unscored = EpisodeOutcome("t", "grading_error", scored=False, reward=None)
    assert unscored.termination is Termination.GRADING_ERROR and not unscored.trainable
    with pytest.raises(ValueError, match="2 logprobs for 3 completion ids"):
        TurnTokens([1], [1, 2, 3], [-0.1, -0.2])


def test_handoff_hands_over_once_and_survives_a_copied_info():
    import copy

    handoff = OutcomeHandoff("e1")
    outcome = EpisodeOutcome("t", Termination.FINISHED, scored=True, reward=1.0, episode_id="e1")
    info = {HANDOFF_KEY: handoff}
    copied = copy.deepcopy(info)
    handoff.leave(outcome)
    assert copied[HANDOFF_KEY].take() is outcome  # an engine's deep copy still reaches this episode's hand-off
    assert handoff.take() is None
    assert outcome.final_info()["episode_id"] == "e1" and outcome.final_info()["scored"] is True


# --- agent ----------------------------------------------------------------------------------
def test_training_mode_keeps_replies_verbatim_and_refuses_compaction():
    reply = "<think>plan</think>\n" + SOLVE
    eval_agent, train_agent = TerminalBenchAgent(), TerminalBenchAgent(training=True)
    for agent in (eval_agent, train_agent):
        agent.update_from_env({"instruction": "x"}, 0.0, False, {})
        agent.update_from_model(reply)
    assert train_agent.chat_completions[-1]["content"] == reply
    assert "<think>" not in eval_agent.chat_completions[-1]["content"]
    assert train_agent.compaction_enabled is False and eval_agent.compaction_enabled is True
    with pytest.raises(ConfigError, match="compaction=true with training=true"):
        TerminalBenchAgent(training=True, compaction=True)


def test_agent_keeps_a_task_dict_set_by_the_engine_and_writes_metadata_without_info_kwarg():
    agent = TerminalBenchAgent()
    agent.trajectory.task = {"task_id": "from-rllm"}
    handoff = OutcomeHandoff("ep-meta")
    reset_info = {"episode_id": "ep-meta", HANDOFF_KEY: handoff}
    agent.update_from_env({"instruction": "x"}, 0.0, False, reset_info)
    assert HANDOFF_KEY not in reset_info  # taken out: no step or log dict carries it
    agent.update_from_model("<bash>\ncmd: echo hi", finish_reason="length")
    assert agent.trajectory.task == {"task_id": "from-rllm"}
    assert step_metadata(agent.trajectory.steps[-1])["truncated_reply"] is True
    handoff.leave(EpisodeOutcome("t", Termination.TRUNCATED, scored=True, reward=0.5, episode_id="ep-meta"))
    last = agent.trajectory.steps[-1]  # reading the trajectory absorbs the outcome the env left
    assert step_metadata(last)["termination"] == "truncated" and step_metadata(last)["reward"] == 0.5 and last.done
    other = TerminalBenchAgent()  # another episode's agent never sees it
    other.update_from_env({"instruction": "x"}, 0.0, False, {"episode_id": "ep-meta"})
    other.update_from_model("<bash>\ncmd: echo hi")
    assert "termination" not in step_metadata(other.trajectory.steps[-1])


# --- env ------------------------------------------------------------------------------------
def test_env_from_env_args_alone_rejects_unknown_keys():
    env = DockerIsolatedEnv(max_steps=3, run_id="seams", judge_weight=0.0)
    assert env.task is None and env.config.max_steps == 3 and env.config.run_id == "seams"
    with pytest.raises(ConfigError, match="unknown argument.*max_stepz"):
        DockerIsolatedEnv(max_stepz=3)
    with pytest.raises(ConfigError, match="no task"):
        env.reset()


@pytest.mark.docker
def test_reset_by_task_is_idempotent_and_a_new_task_releases_the_old_container():
    env = DockerIsolatedEnv(run_id="seams-reset")
    try:
        first = env.reset(task=task_to_flat_dict(TASK))
        again = env.reset(task=TASK)  # same task before any step: the same episode, one container
        assert again[1]["container_id"] == first[1]["container_id"] and exists(first[1]["container_id"])
        env.step(LOOK)
        after_step = env.reset(task=TASK)  # a step was taken: a fresh episode
        assert after_step[1]["container_id"] != first[1]["container_id"] and not exists(first[1]["container_id"])
        switched = env.reset(task=OTHER)
        assert env.task.task_id == "seams-other" and not exists(after_step[1]["container_id"])
        assert switched[0]["instruction"] == "Do nothing."
    finally:
        env.close()
    assert not exists(switched[1]["container_id"])


@pytest.mark.docker
def test_episode_records_turn_tokens_and_a_cut_episode_is_graded_with_who_cut_it():
    replies = [
        ModelResponse(text=SOLVE, prompt_ids=[1, 2, 3], completion_ids=[7, 8], logprobs=[-0.5, -0.25]),
        ModelResponse(text=LOOK, prompt_ids=[1, 2, 3, 7, 8, 9], completion_ids=[10], logprobs=[-1.0]),
    ]
    agent = TerminalBenchAgent(training=True)
    result = run_episode(DockerIsolatedEnv(TASK), agent, ScriptedModelClient(replies), max_steps=2)
    outcome = result.outcome
    assert outcome.termination is Termination.MAX_STEPS and outcome.scored and outcome.reward == pytest.approx(1.0)
    assert [t.completion_ids for t in outcome.turn_tokens] == [[7, 8], [10]]
    assert agent.trajectory.steps[0].response_ids == [7, 8] and agent.trajectory.steps[1].logprobs == [-1.0]
    last = step_metadata(agent.trajectory.steps[-1])
    assert last["scored"] is True and last["termination"] == "max_steps" and "grade" in last


@pytest.mark.docker
def test_output_limit_stop_ends_graded_and_infrastructure_is_not_trainable():
    cut = ModelResponse(text="<bash>\ncmd: echo hel", finish_reason="length")
    result = run_episode(
        DockerIsolatedEnv(TASK), TerminalBenchAgent(), ScriptedModelClient([cut]), max_steps=5, stop_on_output_limit=True
    )
    assert result.outcome.termination is Termination.OUTPUT_LIMIT and result.outcome.scored
    assert result.outcome.reward == pytest.approx(0.25)
    broken = TASK.model_copy(update={"task_id": "seams-broken", "dockerfile": "FROM terminal-agent/none:never\n"})
    failed = run_episode(DockerIsolatedEnv(broken), TerminalBenchAgent(), ScriptedModelClient([FINISH]), max_steps=2)
    assert failed.outcome.termination is Termination.IMAGE_ERROR and not failed.outcome.trainable
    assert failed.scored is False and failed.error_kind == "image"


# --- compat ---------------------------------------------------------------------------------
def test_a_broken_rllm_install_raises_with_its_cause(tmp_path):
    fake = tmp_path / "rllm"
    (fake / "agents").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "agents" / "__init__.py").write_text("")
    (fake / "agents" / "agent.py").write_text("import tinker_missing_dependency\n")
    code = textwrap.dedent(
        """
        try:
            import terminal_agent.compat.rllm
        except ImportError as exc:
            print(type(exc).__name__, exc)
        else:
            print("fell back")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**__import__("os").environ, "PYTHONPATH": f"{tmp_path}:{__import__('os').environ.get('PYTHONPATH', '')}"})
    assert "RLLMImportError" in result.stdout and "tinker_missing_dependency" in result.stdout, result.stdout + result.stderr


@pytest.mark.docker
def test_a_turn_that_cannot_fit_the_context_ends_the_episode_graded():
    long_prompt = ModelResponse(text=SOLVE, prompt_tokens=900, completion_tokens=50)
    result = run_episode(
        DockerIsolatedEnv(TASK), TerminalBenchAgent(), ScriptedModelClient([long_prompt, FINISH]), max_steps=5,
        sampling={"max_tokens": 100}, max_context_tokens=1000,
    )
    assert result.outcome.termination is Termination.CONTEXT_LIMIT and result.turns == 1
    assert result.outcome.scored and result.outcome.reward == pytest.approx(1.0)
