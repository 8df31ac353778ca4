"""The verl run's stall watchdog: no new step for trainer.stall_timeout_s -> stopped, with the worker's error."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from terminal_agent.training.launch_plan import LaunchPlan
from terminal_agent.training.preset_config import load_preset
from terminal_agent.training.verl.launch import start_stall_watchdog
from terminal_agent.training.verl.stall_watchdog import STALL_FILE, StallWatchdog, logged_steps, newest_worker_error

TRACEBACK = """\x1b[36m(WorkerDict pid=4242)\x1b[0m Traceback (most recent call last):
(WorkerDict pid=4242)   File "vllm/lora/worker_manager.py", line 120, in _create_merged_loras_inplace
(WorkerDict pid=4242)     first = next(iter(lora_model.loras.values()))
(WorkerDict pid=4242) StopIteration
"""


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _step_line(step: int) -> str:
    return '{"step": %d, "data": {"critic/score/mean": 0.1}}\n' % step


def test_a_run_without_progress_is_stopped_with_the_workers_error(tmp_path):
    metrics, logs, clock, calls = tmp_path / "verl_metrics.jsonl", tmp_path / "logs", FakeClock(), []
    logs.mkdir()
    watchdog = StallWatchdog(metrics, tmp_path / "run", 600, calls.append, ray_log_dir=logs, clock=clock)
    clock.now += 599
    assert watchdog.check() is None  # the first step may take the whole timeout (startup, vLLM's compile)
    metrics.write_text(_step_line(1))
    clock.now += 500
    assert watchdog.check() is None and calls == []  # a step logged: the clock starts again
    (logs / "worker-abc.err").write_text("WARNING some warning\n" + TRACEBACK)
    (logs / "worker-old.out").write_text("RuntimeError: an older failure\n")
    os.utime(logs / "worker-old.out", (time.time() - 5, time.time() - 5))
    clock.now += 599
    assert watchdog.check() is None
    clock.now += 2
    reason = watchdog.check()
    assert reason is not None and calls == [reason]
    assert "no progress for 601 s" in reason and "while waiting for step 2" in reason
    assert "worker-abc.err: (WorkerDict pid=4242) StopIteration" in reason
    assert (tmp_path / "run" / STALL_FILE).read_text().strip() == reason
    clock.now += 1000
    assert watchdog.check() == reason and len(calls) == 1  # it fires once


def test_steps_are_counted_without_torn_lines_and_no_log_is_said(tmp_path):
    metrics = tmp_path / "m.jsonl"
    metrics.write_text(_step_line(1) + _step_line(2) + '{"step": 3, "data": {"crit')
    assert logged_steps(metrics) == 2
    assert logged_steps(tmp_path / "missing.jsonl") == 0
    assert newest_worker_error(tmp_path / "no-logs") is None
    clock, calls = FakeClock(), []
    watchdog = StallWatchdog(tmp_path / "none.jsonl", tmp_path, 60, calls.append, ray_log_dir=tmp_path / "no-logs",
                             clock=clock)
    clock.now += 61
    assert "waiting for the first step; no error in Ray's worker logs" in watchdog.check()


def test_the_thread_stops_a_stalled_run_and_not_a_progressing_one(tmp_path):
    metrics, stalled = tmp_path / "m.jsonl", threading.Event()
    # a timeout ten times the step interval: on a loaded host (the full suite on 2 cores) a 0.6 s timeout fired
    # between two steps 0.2 s apart
    watchdog = StallWatchdog(metrics, tmp_path, 2.0, lambda reason: stalled.set(), ray_log_dir=tmp_path,
                             poll_s=0.05).start()
    try:
        for step in range(1, 6):  # a step every 0.2 s: progress
            metrics.write_text("".join(_step_line(s) for s in range(1, step + 1)))
            assert not stalled.wait(0.2)
        assert stalled.wait(10.0)  # then nothing: stopped within the timeout and a poll
    finally:
        watchdog.stop()


def test_the_launch_starts_it_only_with_the_file_logger(tmp_path):
    preset = load_preset("verl_1gpu", [f"trainer.output_dir={tmp_path}", "trainer.stall_timeout_s=120"])
    watchdog = start_stall_watchdog(LaunchPlan(preset=preset, run_dir=preset.run_dir), on_stall=lambda reason: None)
    try:
        assert watchdog is not None and watchdog.stall_timeout_s == 120
        assert watchdog.metrics_path == (Path(tmp_path) / "verl_1gpu" / "verl_metrics.jsonl").resolve()
    finally:
        watchdog.stop()
    console_only = load_preset("verl_1gpu", [f"trainer.output_dir={tmp_path}", "trainer.loggers=[console]"])
    assert start_stall_watchdog(LaunchPlan(preset=console_only, run_dir=console_only.run_dir)) is None
    never = load_preset("verl_1gpu", [f"trainer.output_dir={tmp_path}", "trainer.stall_timeout_s=null"])
    assert start_stall_watchdog(LaunchPlan(preset=never, run_dir=never.run_dir)) is None
