"""Remake the viewer screenshots in docs/figures/: an eval run's job and trajectory pages, a training step's rollouts.

    python scripts/screenshot_viewer.py                       # makes both runs itself (Docker; about 5 min on 2 cores)
    python scripts/screenshot_viewer.py --eval-run runs/mine --training-run runs/my-grpo-run -o docs/figures

Without --eval-run it makes a real scripted eval run (the scripted model: a look around, the task's reference
solution; plus a task whose image cannot be built, to show an error); without --training-run one real local GRPO
step (the embedded model with LoRA, a group of two: the reference solution and finishing at once). The viewer is
stock Harbor's (`harbor view`, started as `terminal-agent view` starts it) and the browser is headless Chromium
from scripts/setup_browser.sh. The local folder the viewer shows is replaced on the page by a neutral label
before each screenshot (`runs/...`), so no machine path ends up in the figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASK = "fix-stats-script"
VIEWPORT = {"width": 1280, "height": 820}
MAX_BYTES = 300_000

MASK_PATHS = """([path, label]) => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.nodeValue.includes(path)) node.nodeValue = node.nodeValue.split(path).join(label);
  }
}"""


def make_eval_run(base: Path) -> Path:
    from terminal_agent.task_quality.validation import oracle_replies
    from terminal_agent.tasks.csv.format import write_tasks_csv
    from terminal_agent.tasks.loading import load_tasks

    task = next(t for t in load_tasks(ROOT / "dataset" / "latest_verified.csv") if t.task_id == TASK)
    broken = task.model_copy(update={"task_id": "unbuildable", "dockerfile": "FROM terminal-agent/no-such-image:never\n"})
    write_tasks_csv([task, broken], base / "tasks.csv")
    replies = ["Let me look at the files first.\n<bash>\ncmd: ls -la /app && head -n 15 /app/stats.py\n</bash>",
               *oracle_replies(task)]
    (base / "replies.json").write_text(json.dumps(replies))
    run_dir = base / "runs" / "scripted-demo"
    subprocess.run([sys.executable, "-m", "terminal_agent", "eval", "run", str(base / "tasks.csv"), "--model",
                    f"scripted:{base / 'replies.json'}", "--max-steps", "8", "-c", "2", "-o", str(run_dir), "--no-plot"],
                   cwd=ROOT, check=False, timeout=900)  # exit 1: the unbuildable task has no scored trial
    if not (run_dir / f"{TASK}__attempt-0" / "result.json").is_file():
        sys.exit(f"the eval run wrote no trial for {TASK}; see the output above")
    return run_dir


def make_training_run(base: Path) -> Path:
    from terminal_agent.rollout.episode_spec import EpisodeSpec
    from terminal_agent.sandbox.images.manager import ensure_task_image
    from terminal_agent.tasks.csv.format import read_tasks_csv
    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.local.demonstration_client import alternating_demonstrations
    from terminal_agent.training.local.trainer import train_local

    (task,) = [t for t in read_tasks_csv(ROOT / "dataset" / "latest_verified.csv").tasks if t.task_id == TASK]
    ensure_task_image(task)
    config = LocalTrainingConfig(group_size=2, tasks_per_step=1, episode=EpisodeSpec.small(2), steps=1, num_threads=1,
                                 micro_batch_tokens=2048, lr=1e-3, experiment="viewer-screenshot", wandb=False)
    run_dir = base / "grpo-demo"
    train_local(config, [task], run_dir, client_factory=alternating_demonstrations([task], strict=True))
    return run_dir


def chromium_executable() -> str:
    run = subprocess.run(["bash", str(ROOT / "scripts" / "setup_browser.sh")], capture_output=True, text=True,
                         env={**__import__("os").environ, "PYTHON": sys.executable}, timeout=900)
    if run.returncode != 0:
        sys.exit(f"no headless Chromium: {run.stderr.strip()}")
    return run.stdout.strip().splitlines()[-1]


def shoot(page, path: Path, masks: list[tuple[str, str]], **kwargs) -> None:
    for local, label in masks:
        page.evaluate(MASK_PATHS, [local, label])
    page.screenshot(path=str(path), **kwargs)
    size = path.stat().st_size
    print(f"{path} ({size // 1024} KB)")
    if size > MAX_BYTES:
        print(f"warning: {path.name} is over {MAX_BYTES // 1000} KB", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-run", type=Path, help="an eval run directory (default: make a scripted one)")
    parser.add_argument("--training-run", type=Path, help="a local training run directory (default: run one step)")
    parser.add_argument("-o", "--out", type=Path, default=ROOT / "docs" / "figures")
    args = parser.parse_args()

    from playwright.sync_api import expect, sync_playwright

    from terminal_agent.harbor_jobs.viewer import find_harbor_python, jobs_folder_for, make_harbor_venv, start_viewer

    chromium = chromium_executable()
    harbor_python = find_harbor_python() or make_harbor_venv()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="viewer-shots-") as tmp:
        base = Path(tmp)
        eval_run = (args.eval_run or make_eval_run(base / "eval")).resolve()
        training_run = (args.training_run or make_training_run(base / "training")).resolve()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True)
            page = browser.new_page(viewport=VIEWPORT, device_scale_factor=1)
            page.set_default_timeout(60_000)

            # an eval run: the job's trials, then one trajectory
            target = jobs_folder_for(eval_run)
            viewer = start_viewer(target.jobs_dir, harbor_python=harbor_python, log_path=base / "view-eval.log")
            try:
                masks = [(str(target.jobs_dir), "runs")]
                page.goto(viewer.base_url + target.path(), wait_until="networkidle")
                page.get_by_role("tab", name="Rollouts").click()
                trial = page.get_by_role("row").filter(has_text=f"{TASK}__attempt-0")
                expect(trial).to_contain_text("1.00")
                shoot(page, args.out / "viewer_eval_job.png", masks)
                trial.get_by_text(f"{TASK}__attempt-0").click()
                page.wait_for_url(f"**/trials/{TASK}__attempt-0")
                panel = page.get_by_role("tabpanel")
                panel.get_by_role("button", name="Expand all").click()
                expect(panel).to_contain_text("Episode ended (finished)")
                page.set_viewport_size({"width": VIEWPORT["width"], "height": 1100})
                step = page.get_by_role("button", name="Copy #3")  # the first model call: its command and output
                top = step.evaluate("el => el.getBoundingClientRect().top + window.scrollY")
                page.evaluate(f"window.scrollTo(0, {top} - 16)")
                shoot(page, args.out / "viewer_eval_trajectory.png", masks)
            finally:
                viewer.stop()

            # a training run: its first step's rollouts, trials named by step, group and episode
            target = jobs_folder_for(training_run)
            viewer = start_viewer(target.jobs_dir, harbor_python=harbor_python, log_path=base / "view-training.log")
            try:
                masks = [(str(target.jobs_dir), "runs/grpo-demo/rollouts")]
                page.goto(viewer.base_url + "/jobs/step-000001", wait_until="networkidle")
                page.get_by_role("tab", name="Rollouts").click()
                expect(page.get_by_role("row").filter(has_text="step-000001__group-00__episode-0")).to_be_visible()
                shoot(page, args.out / "viewer_training_rollouts.png", masks)
            finally:
                viewer.stop()
            browser.close()


if __name__ == "__main__":
    main()
