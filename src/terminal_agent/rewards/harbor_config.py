"""Settings of the Harbor verifier mode of grading (``tests/test.sh`` -> ``/logs/verifier/reward.txt``).

Here, beside what every mode shares rather than in :mod:`terminal_agent.rewards.harbor`: ``GradingConfig`` carries
it (``grading.harbor``) without importing the grader, and its offline-runtime settings (wheelhouse, registry, tool
cache) serve the weighted pytest mode's test requirements too
(:mod:`terminal_agent.rewards.weighted_pytest.requirements`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class HarborGradingConfig(BaseModel):
    """How a task in harbor mode is verified."""

    model_config = ConfigDict(extra="forbid")

    network: Literal["task", "offline"] = "task"
    """``task``: the verifier phase gets the task's verifier policy (``task.verifier.verifier_network(
    limits.network)``), and with a network its own installs run as written; ``offline``: the verifier never
    gets a network and runs on the offline verifier runtime (the training clusters' case)."""
    verifier_parent: str = "/var/lib"
    """Directory in the sandbox under which the random verifier directory (runner, runtime, logs) is made."""
    startup_grace_s: float = Field(30.0, gt=0)
    """Added to the task's verifier timeout (``limits.test_timeout_s``) for the host-side deadline."""
    isolate_home: bool = True
    """Run test.sh with ``HOME`` in the verifier's own fresh directory, so ``source $HOME/.local/bin/env`` (the uv
    installer's PATH file) and ``~/.local/bin`` can hold nothing the agent planted. False: the verifier user's
    home from the image (trusts the agent's dotfiles; ``~`` in tests then means what it meant to the agent)."""
    wheelhouse: str | None = None
    """A host directory of wheels searched before the package registry for the tools test.sh names
    (``uvx -w rdflib==7.1.4``); for hosts that reach no registry."""
    use_registry: bool = True
    """Fetch tools missing from the cache and the wheelhouse from the package registry the host reaches (pip)."""
    tool_cache_dir: str | None = None
    """Where fetched tool wheels are cached, keyed by requirement (and the python they are for, where it is not the
    host's); None: ``~/.cache/terminal-agent/harbor-tools``."""
    ctrf_plugin: str = "pytest-json-ctrf==0.3.5"
    """The CTRF plugin provided whenever a test script passes ``--ctrf`` (TB2 pins this version)."""
    fetch_timeout_s: float = Field(180.0, gt=0)
    """Deadline of one host-side ``pip download`` of a tool."""
    max_compiled_bytes: int = Field(512 * 1024 * 1024, ge=0)
    """Largest download of a tool that has no pure-Python wheel (``numpy``): its wheels for the python that runs the
    verifier (asked of the sandbox), shipped unpacked and used where the image's python matches their tags;
    0: pure-Python only."""
    max_artifact_bytes: int = Field(256 * 1024 * 1024, gt=0)
    """Largest archive of artifacts handed from the agent's sandbox to a separate verifier environment."""
    max_report_bytes: int = Field(8 * 1024 * 1024, gt=0)
    """Largest ``ctrf.json`` read back (reward files are capped at 64 KiB)."""
