"""The bwrap backend beyond the shared self-check: exports, clear errors, rlimits, dead-owner cleanup.

Images are exported from the local Docker daemon once per session (``bwrap_support``), then run
without it. The self-check suite (``test_self_check.py``) and the grading tests and attacks
(``test_grading.py``, ``test_grading_adversarial.py``) run against bwrap too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from bwrap_support import bwrap_config
from typer.testing import CliRunner

from terminal_agent.errors import ImageNotAvailableError, SandboxUnavailableError
from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox
from terminal_agent.sandbox.bwrap import state as bwrap_state
from terminal_agent.sandbox.images.export import ExportedImages
from terminal_agent.tasks.model import Task, TaskLimits

# docker for the export (the sandboxes themselves use no daemon); serial: it leaves leaked bwrap state machine-wide
pytestmark = [pytest.mark.docker, pytest.mark.serial]

BASE = "terminal-agent/base:bookworm"
TASK = Task(
    task_id="bwrap-layered",
    instruction="x",
    dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /srv\nRUN mkdir -p /srv/data && echo layered > /srv/data/f && rm -rf /usr/share/doc\n",
    test_source="def test_x():\n    pass\n",
    test_weights={"test_x": 1.0},
)


def test_a_task_layer_over_the_base_with_deletions(docker_client):
    config = bwrap_config([TASK])
    image = resolve_task_image(config, TASK)
    export = ExportedImages.open(config.bwrap.images_dir).image(image)
    assert export.workdir == "/srv" and export.layer_archives
    assert sum(path.stat().st_size for path in export.layer_archives) < 64 * 1024  # small: only the diff
    with start_sandbox(config, image, TaskLimits(), run_id="test-bwrap") as sandbox:
        result = sandbox.exec("pwd; cat data/f; ls /usr/share/doc 2>&1 | head -1", 10)
        assert result.output.splitlines()[:2] == ["/srv", "layered"]
        assert "No such file" in result.output  # the layer's whiteout hides the base's directory


def test_missing_and_stale_exports_say_how_to_make_one(tmp_path, monkeypatch, docker_client):
    monkeypatch.delenv("TERMINAL_AGENT_IMAGES_DIR", raising=False)
    with pytest.raises(ImageNotAvailableError, match="terminal-agent images export"):
        ExportedImages.open(None)
    with pytest.raises(ImageNotAvailableError, match="manifest.json is missing.*images export"):
        ExportedImages.open(tmp_path)
    config = bwrap_config([TASK])
    exported = ExportedImages.open(config.bwrap.images_dir)
    with pytest.raises(ImageNotAvailableError, match="not in the image export"):
        exported.image_for_task(TASK.model_copy(update={"task_id": "never-exported"}))
    with pytest.raises(ImageNotAvailableError, match="stale"):
        exported.image_for_task(TASK.model_copy(update={"dockerfile": TASK.dockerfile + "RUN true\n"}))
    with pytest.raises(ImageNotAvailableError, match="not in the export"):
        start_sandbox(config, "terminal-agent/never:built", TaskLimits())


def test_missing_bwrap_is_a_clear_error(docker_client):
    config = bwrap_config()
    config = config.model_copy(update={"bwrap": config.bwrap.model_copy(update={"bwrap_path": "/nonexistent/bwrap"})})
    with pytest.raises(SandboxUnavailableError, match="apt-get install -y bubblewrap"):
        start_sandbox(config, BASE, TaskLimits())


def test_rlimit_fallback_is_applied_and_recorded(docker_client):
    config = bwrap_config()
    config = config.model_copy(update={"bwrap": config.bwrap.model_copy(update={"limits": "rlimit"})})
    with start_sandbox(config, BASE, TaskLimits(memory_mb=256), run_id="test-bwrap") as sandbox:
        assert sandbox.server_info["limits"] == {"memory": "rlimit-as", "pids": "none", "cpu": "none"}
        assert sandbox.exec("ulimit -v", 10).output.strip() == str(256 * 1024)
        hog = sandbox.exec("python3 -c 'b = bytearray(1 << 30)'", 30)
        assert hog.exit_code != 0 and "MemoryError" in hog.output
        assert sandbox.exec("echo fine", 10).output == "fine\n"


OWNER = textwrap.dedent(
    """
    import json, sys
    from terminal_agent.sandbox.backends import start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig
    from terminal_agent.tasks.model import TaskLimits

    config = SandboxConfig.model_validate_json(sys.argv[1])
    boxes = [start_sandbox(config, sys.argv[2], TaskLimits(), run_id="test-bwrap-owner") for _ in range(2)]
    boxes[0].exec("setsid nohup sleep 1000 >/dev/null 2>&1 &", 10)
    print(json.dumps([{"dir": str(b._dir), "cgroups": b.applied_limits.cgroup_dirs, "pid": b._proc.pid} for b in boxes]), flush=True)
    sys.stdin.read()
    """
)


def _alive(pid: int) -> bool:
    """Running and not a zombie (a process that exits between the two reads is not alive)."""
    try:
        return sandbox_labels.process_start_ticks(pid) is not None and Path(f"/proc/{pid}/stat").read_bytes().split(b") ")[1][:1] != b"Z"
    except FileNotFoundError:
        return False


def test_owner_sigkill_leaves_nothing(docker_client):
    config = bwrap_config()
    owner = subprocess.Popen([sys.executable, "-c", OWNER, config.model_dump_json(), BASE],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=os.environ.copy())
    try:
        boxes = json.loads(owner.stdout.readline())
        sleepers = subprocess.run(["pgrep", "-f", "^sleep 1000$"], capture_output=True, text=True).stdout.split()
        assert sleepers, "the background process never started"
        assert all(Path(box["dir"]).is_dir() for box in boxes)
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    deadline = time.monotonic() + 20
    while True:
        left = [box["dir"] for box in boxes if Path(box["dir"]).exists()]
        left += [group for box in boxes for group in box["cgroups"] if os.path.isdir(group)]
        left += [str(box["pid"]) for box in boxes if _alive(box["pid"])]
        left += [pid for pid in sleepers if _alive(int(pid))]
        if not left:
            break
        assert time.monotonic() < deadline, f"left after the owner's SIGKILL: {left}"
        time.sleep(0.2)


def test_cleanup_command_removes_sandboxes_of_dead_owners(tmp_path, docker_client):
    from terminal_agent.cli import app

    dead = subprocess.Popen(["true"])
    dead.wait()
    leaked = tmp_path / "sandboxes" / "bw-000000000001"
    (leaked / "upper" / "etc").mkdir(parents=True)
    labels = sandbox_labels.owner_labels("test-bwrap-leak", 3600, BASE)
    labels[sandbox_labels.OWNER_PID] = str(dead.pid)
    bwrap_state.write_record(leaked, {"labels": labels, "cgroups": []})
    alive = tmp_path / "sandboxes" / "bw-000000000002"
    alive.mkdir(parents=True)
    bwrap_state.write_record(alive, {"labels": sandbox_labels.owner_labels("test-bwrap-mine", 3600, BASE), "cgroups": []})
    runner = CliRunner()
    listed = runner.invoke(app, ["cleanup", "--bwrap-dir", str(tmp_path)], env={"COLUMNS": "250"})
    assert listed.exit_code == 0 and "bw-000000000001" in listed.output and "bw-000000000002" not in listed.output
    assert leaked.exists()
    applied = runner.invoke(app, ["cleanup", "--apply", "--bwrap-dir", str(tmp_path)], env={"COLUMNS": "250"})
    assert applied.exit_code == 0, applied.output
    assert not leaked.exists() and alive.exists()


def test_images_export_command(tmp_path, docker_client):
    from terminal_agent.cli import app
    from terminal_agent.tasks.terminal_bench.format import write_tb_task

    config = bwrap_config([TASK])
    task_dir = write_tb_task(TASK, tmp_path / "tasks")
    result = CliRunner().invoke(app, ["images", "export", str(task_dir), "-o", config.bwrap.images_dir], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "bwrap-layered" in result.output and "already there" in result.output
    missing = CliRunner().invoke(app, ["images", "export", str(task_dir), "-o", str(tmp_path / "x"), "--task", "nope"])
    assert missing.exit_code == 1 and "nope" in missing.output


def test_an_episode_of_the_scripted_model_on_bwrap(docker_client):
    from terminal_agent.agent import TerminalBenchAgent
    from terminal_agent.env import DockerIsolatedEnv, EnvConfig
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.rollout.episode import run_episode

    task = Task(
        task_id="bwrap-episode",
        instruction="Write 42 to /srv/answer.txt.",
        dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /srv\n",
        test_source="def test_answer():\n    assert open('/srv/answer.txt').read().strip() == '42'\n",
        test_weights={"test_answer": 1.0},
    )
    replies = [
        "<bash>\ncmd: pwd && ls -la\n</bash>",
        "<bash>\ncmd: echo 42 > answer.txt\n</bash>",
        "<finish>\nmessage: done\n</finish>",
    ]
    config = bwrap_config([task])
    sandboxes = bwrap_state.sandboxes_dir(bwrap_state.state_root(config.bwrap.state_dir))
    before = set(sandboxes.glob("bw-*"))
    env = DockerIsolatedEnv(task, EnvConfig(max_steps=5, sandbox=config))
    model = ScriptedModelClient(replies)
    result = run_episode(env, TerminalBenchAgent(), model, max_steps=5)
    assert result.scored and result.reward == pytest.approx(1.0), result.grade
    assert "/srv" in model.calls[1][-1]["content"]  # the first observation came from the bwrap sandbox
    assert set(sandboxes.glob("bw-*")) <= before, "the episode's sandbox was not released"


def test_a_sandbox_started_by_a_thread_that_ended_keeps_running(docker_client):
    import threading

    config = bwrap_config()
    box = {}
    thread = threading.Thread(target=lambda: box.update(sandbox=start_sandbox(config, BASE, TaskLimits(), run_id="test-bwrap")))
    thread.start()
    thread.join()
    time.sleep(0.3)  # --die-with-parent would have fired by now had the ended thread been bwrap's parent
    with box["sandbox"] as sandbox:
        assert sandbox.exec("echo still here", 10).output == "still here\n"


def test_root_in_the_sandbox_is_root_of_its_own_user_namespace_only(docker_client):
    with start_sandbox(bwrap_config(), BASE, TaskLimits(), run_id="test-bwrap") as sandbox:
        assert sandbox.exec("readlink /proc/self/ns/user", 10).output.strip() != os.readlink("/proc/self/ns/user")
        assert sandbox.exec("id -u", 10).output.strip() == "0"
        for command in ("mknod /tmp/disk b 8 0", "mount -t tmpfs none /mnt", "echo 1 > /proc/sys/vm/drop_caches",
                        "echo 0 > /proc/sys/kernel/randomize_va_space", "test -w /proc/sysrq-trigger"):
            assert sandbox.exec(command, 10).exit_code != 0, command
        assert sandbox.exec("cat /proc/sys/kernel/ostype", 10).output == "Linux\n"  # still readable


def test_an_image_holding_a_layer_twice_mounts_each_lower_dir_once(docker_client):
    """Two build steps with identical results share one layer; some kernels (6.18) refuse an overlay
    whose lowerdir names a directory twice, so the sandbox lists each once (topmost kept)."""
    from terminal_agent.tasks.families import generate_instances

    candidates = generate_instances("set-permissions", 6, 0, split="train")  # 2 of these hold a layer twice
    config = bwrap_config(candidates)
    export = ExportedImages.open(config.bwrap.images_dir)
    repeated = [t for t in candidates
                if len(set(export.image(resolve_task_image(config, t)).layer_archives))
                < len(export.image(resolve_task_image(config, t)).layer_archives)]
    assert repeated, "no set-permissions instance holds a layer twice any more; pick another image for this test"
    task = repeated[0]
    with start_sandbox(config, resolve_task_image(config, task), task.limits, run_id="test-bwrap-dup") as sandbox:
        mountinfo = sandbox.exec("grep -o 'lowerdir=[^, ]*' /proc/self/mountinfo | head -1", 10).output.strip()
        lowers = mountinfo.removeprefix("lowerdir=").split(":")
        assert len(lowers) == len(set(lowers)) >= 2, mountinfo
        # the task's own files are there: the merged tree is the image's
        assert sandbox.exec("ls /app", 10).exit_code == 0


def test_sandboxes_start_while_another_owner_sweeps_the_state_root(docker_client):
    """A dead owner's reaper sweeps the whole state root; starts of a live owner must survive it.

    Before sandbox directories were renamed into place with their record, a sweep that came between
    a start's ``mkdir`` and its record removed the directory ("no owner record"): 17 episodes of two
    side-by-side training runs on the GPU node ended as infrastructure errors that way.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    config = bwrap_config()
    root = bwrap_state.state_root(config.bwrap.state_dir)
    stop = threading.Event()
    sweeps = []

    def sweep() -> None:
        while not stop.is_set():
            bwrap_state.sweep_leaked(root)
            sweeps.append(1)

    sweeper = threading.Thread(target=sweep, daemon=True)
    sweeper.start()

    def start_and_run(index: int) -> str:
        with start_sandbox(config, BASE, TaskLimits(), run_id="test-bwrap-sweep") as sandbox:
            return sandbox.exec(f"echo box {index}", 10).output

    try:
        with ThreadPoolExecutor(8) as pool:
            outputs = list(pool.map(start_and_run, range(16)))
    finally:
        stop.set()
        sweeper.join(10)
    assert outputs == [f"box {index}\n" for index in range(16)]
    assert len(sweeps) > 16, "the sweeper hardly ran while the sandboxes started"
