"""``model.fused_kernels: torch``: verl's fused log-prob forward gives the plain path's log-probs and gradients.

The plain path (logits, then verl's per-token log-softmax when flash-attn is absent) dominated a verl_1gpu step on
the H100 (docs/training.md, "Where a verl step goes"); the fused path computes the same numbers in chunks. The
driver runs verl 0.9.1's own monkey patch on the embedded model with the project's packed attention, in the verl
launch venv (CPU, float32).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from test_verl_rehearsal import verl_launch_python  # noqa: F401  (the venv fixture)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


@pytest.mark.slow
@pytest.mark.model
def test_fused_log_probs_equal_the_plain_path(verl_launch_python):  # noqa: F811
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([verl_launch_python, str(HERE / "verl_fused_logprobs_driver.py")], capture_output=True,
                          text=True, timeout=600, env=environment)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["forward_class"].startswith("verl.models.transformers")  # verl's forward really ran
    assert result["log_prob_gap"] < 1e-3
    assert max(result["gradient_relative_gaps"]) < 1e-3
    assert 0.0 <= result["entropy_min"] <= result["entropy_max"] < 11.0  # log(49152) = 10.8
