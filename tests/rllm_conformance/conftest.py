"""Fixtures of the rLLM conformance suite: it runs only inside a venv where the real rLLM is installed.

``scripts/setup_rllm_venvs.sh`` builds one venv per rLLM version (HEAD and v0.2.1) and
``scripts/test.sh`` runs this folder with each venv's interpreter. The main test run skips the
folder (``tests/conftest.py``). Each test module says which rLLM version it needs.
"""

from __future__ import annotations

import importlib.metadata
import time
import uuid

import docker
import pytest

from terminal_agent.compat.rllm import RLLM_AVAILABLE
from terminal_agent.sandbox.labels import RUN_ID
from terminal_agent.tasks.model import Task
from terminal_agent.tasks.parquet.rows import task_to_flat_dict

if not RLLM_AVAILABLE:  # collected by mistake outside a conformance venv: say so loudly
    raise RuntimeError("tests/rllm_conformance needs the real rLLM: run it with scripts/test.sh (builds the venvs)")

RLLM_VERSION = importlib.metadata.version("rllm")

TASK = Task(
    task_id="conformance-hello",
    instruction="Write the word hello into /app/hello.txt.",
    dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
    test_source=(
        "import os\n\n"
        "def test_app_exists():\n    assert os.path.isdir('/app')\n\n"
        "def test_hello():\n    assert open('/app/hello.txt').read().strip() == 'hello'\n"
    ),
    test_weights={"test_app_exists": 1.0, "test_hello": 3.0},
    solution="echo hello > /app/hello.txt",
)
BROKEN_IMAGE_TASK = TASK.model_copy(
    update={"task_id": "conformance-no-image", "dockerfile": "FROM terminal-agent/no-such-base:never\n"}
)
SOLVE = "I will write the file.\n<bash>\ncmd: echo hello > /app/hello.txt\n</bash>"
LOOK = "Let me look around first.\n<bash>\ncmd: ls /app\n</bash>"
FINISH = "<finish>\nmessage: done\n</finish>"


@pytest.fixture(scope="session")
def tokenizer():
    from transformers import AutoTokenizer

    from terminal_agent.models.embedded import ensure_embedded_model_cached

    return AutoTokenizer.from_pretrained(ensure_embedded_model_cached())


@pytest.fixture(scope="session")
def task_image():
    client = docker.from_env(timeout=30)
    client.ping()
    from terminal_agent.sandbox.images.manager import ensure_task_image

    return ensure_task_image(TASK)


@pytest.fixture()
def run_id():
    """A run id of its own per test; asserts that the test left none of its containers behind."""
    run = f"conformance-{uuid.uuid4().hex[:10]}"
    yield run
    client = docker.from_env()
    deadline = time.monotonic() + 15  # a killed auto-remove container is removed by the daemon a moment later
    while True:
        left = client.containers.list(all=True, filters={"label": f"{RUN_ID}={run}"})
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, f"{len(left)} container(s) of run {run} left behind"


def flat_task(task: Task = TASK) -> dict:
    """The task as rLLM hands it to the env: a flat ``extra_info`` row."""
    return task_to_flat_dict(task)


def kill_container_of(env) -> None:
    """Make the sandbox's container die under the env, as a crashed node would."""
    docker.from_env().containers.get(env.sandbox.id).kill()


def assistant_tokens_only(prompt_ids_per_step, completion_ids_per_step, tokenizer):
    """Merge cumulative steps like rLLM's Token mode; return (merged response ids, mask).

    Raises AssertionError when a step's prompt does not extend the previous prompt + completion.
    """
    full = list(prompt_ids_per_step[0]) + list(completion_ids_per_step[0])
    response = list(completion_ids_per_step[0])
    mask = [1] * len(completion_ids_per_step[0])
    for prompt, completion in zip(prompt_ids_per_step[1:], completion_ids_per_step[1:]):
        assert list(prompt[: len(full)]) == full, "a turn's prompt does not extend the previous turn token for token"
        delta = list(prompt[len(full):])
        response += delta + list(completion)
        mask += [0] * len(delta) + [1] * len(completion)
        full = list(prompt) + list(completion)
    return response, mask


def masked_text(response, mask, tokenizer) -> str:
    return tokenizer.decode([t for t, m in zip(response, mask) if m], skip_special_tokens=False)
