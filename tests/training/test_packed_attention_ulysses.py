"""The packed attention's Ulysses SP branch, through verl's own all-to-all helpers, against SP 1.

Two CPU processes (gloo) in the verl launch venv, where verl imports; the driver
(``packed_attention_ulysses_driver.py``) checks outputs and gradients of each rank's half of the packed row.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest
from test_verl_rehearsal import verl_launch_python  # noqa: F401  (the venv fixture)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


@pytest.mark.slow
def test_ulysses_sp2_equals_sp1_in_outputs_and_gradients(verl_launch_python):  # noqa: F811
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([verl_launch_python, str(HERE / "packed_attention_ulysses_driver.py"), _free_port()],
                          capture_output=True, text=True, timeout=600, env=environment)
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(results) == {"0", "1"}
    for rank, cases in results.items():
        for case in cases:
            for what, error in case.items():
                assert error < 1e-5, (rank, case, what)
