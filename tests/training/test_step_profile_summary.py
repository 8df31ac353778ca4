"""The step profile's summary (training_scripts/device_run/summarize_profile.py): py-spy's folded stacks read into
shares of wall time, inclusive and innermost, with the frames every Ray worker passes through left out."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "training_scripts" / "device_run" / "summarize_profile.py"
spec = importlib.util.spec_from_file_location("summarize_profile", SCRIPT)
assert spec is not None and spec.loader is not None
summarize_profile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summarize_profile)


def test_shares_follow_the_sample_counts(tmp_path: Path) -> None:
    folded = tmp_path / "profile_WorkerDict_1.txt"
    folded.write_text(
        "<module> (worker.py:1);update_actor (engine.py:10);forward (model.py:5);attention (attn.py:3) 60\n"
        "<module> (worker.py:1);update_actor (engine.py:10);loss.item (engine.py:20) 30\n"
        "<module> (worker.py:1);main_loop (ray/_private/worker.py:900) 10\n"
        "a truncated line without a count\n"
    )
    stacks = summarize_profile.read_folded(folded)
    assert sum(stacks.values()) == 100
    text = summarize_profile.summarize(stacks, top=5)
    lines = text.splitlines()
    assert lines[0] == "100 samples"
    inclusive = lines[lines.index("inclusive (share of wall time under the frame):") + 1:lines.index("self (innermost frame):")]
    assert inclusive[0].split() == ["90.0%", "update_actor", "(engine.py:10)"]
    assert not any("worker.py" in line for line in inclusive)  # plumbing frames say nothing
    own = lines[lines.index("self (innermost frame):") + 1:]
    assert own[0].split() == ["60.0%", "attention", "(attn.py:3)"] and own[1].startswith("   30.0%")


def test_an_empty_profile_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "profile_TaskRunner_2.txt"
    empty.write_text("")
    assert summarize_profile.summarize(summarize_profile.read_folded(empty), top=5) == "no samples"
