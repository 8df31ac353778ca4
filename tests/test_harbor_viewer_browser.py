"""The viewer looked at in a real browser: `terminal-agent view` on a real scripted eval run (the run and the stock
Harbor venv are tests/test_harbor_jobs.py's fixtures), opened in headless Chromium (Debian's package, driven by
playwright through its executable; scripts/setup_browser.sh installs both). The test clicks from the job list to the
job, its trials, one trial and its trajectory, and reads what a person would see: the commands, their outputs, the
rewards, the broken trial's error instead of a 0. The episode's first command printed `<script>alert(1)</script>`
and terminal escape codes: the page shows them as literal text and no script runs.

Skipped only where Chromium cannot be installed (the reason given); under CI=true that is a failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_harbor_jobs import HOSTILE_COMMAND, TASK, eval_run, harbor_python  # noqa: F401 - fixtures, reused

ROOT = Path(__file__).resolve().parents[1]
CANNOT_INSTALL = 3
HOSTILE_OUTPUT = "<script>alert(1)</script>\n\x1b[31mred\x1b[0m"
# What the hostile script would do if it ran: alert() sets this flag (and a dialog would open).
FLAG_ON_ALERT = "window.alert = (message) => { window.__terminalAgentAlerted = String(message); };"


@pytest.fixture(scope="session")
def chromium() -> str:
    run = subprocess.run(["bash", str(ROOT / "scripts" / "setup_browser.sh")], capture_output=True, text=True, timeout=900,
                         env={**os.environ, "PYTHON": sys.executable})
    if run.returncode == CANNOT_INSTALL:
        reason = f"headless Chromium cannot be installed here: {run.stderr.strip()[-500:]}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip().splitlines()[-1]


@pytest.fixture
def viewer_url(eval_run, harbor_python, tmp_path):  # noqa: F811 - the imported fixtures
    """`terminal-agent view RUN` as a user starts it; yields the URL it prints (the job's page)."""
    log = (tmp_path / "view.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "terminal_agent", "view", str(eval_run), "--no-setup"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
    try:
        url = proc.stdout.readline().strip()  # printed once the viewer answers
        assert url.startswith("http://127.0.0.1:") and url.endswith("/jobs/scripted-run"), (tmp_path / "view.log").read_text()
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.docker
@pytest.mark.browser
def test_job_trial_and_trajectory_pages_show_commands_outputs_and_rewards_as_text(chromium, viewer_url):
    from playwright.sync_api import expect, sync_playwright

    base = viewer_url.rsplit("/jobs/", 1)[0]
    dialogs: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(60_000)
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.add_init_script(FLAG_ON_ALERT)

            # the job list: our run, its agent and model, one errored trial
            page.goto(base + "/", wait_until="networkidle")
            row = page.get_by_role("row").filter(has_text="scripted-run")
            expect(row).to_contain_text("terminal-agent")
            expect(row).to_contain_text("scripted")
            expect(row).to_contain_text("2/2 (1 error)")
            row.get_by_text("scripted-run").click()
            page.wait_for_url("**/jobs/scripted-run")

            # the job: mean reward, then its trials; the unbuildable one shows its error, never a reward of 0
            expect(page.get_by_role("heading", name="scripted-run")).to_be_visible()
            expect(page.get_by_text("1 errors")).to_be_visible()
            page.get_by_role("tab", name="Rollouts").click()
            solved = page.get_by_role("row").filter(has_text=f"{TASK}__attempt-0")
            broken = page.get_by_role("row").filter(has_text="unbuildable__attempt-0")
            expect(solved).to_contain_text("1.00")
            expect(broken).to_contain_text("SandboxBuildFailedError")
            assert "0.00" not in broken.inner_text()

            # one trial: its reward and test score, then its trajectory (every step opened)
            solved.get_by_text(f"{TASK}__attempt-0").click()
            page.wait_for_url(f"**/jobs/scripted-run/trials/{TASK}__attempt-0")
            expect(page.locator("dl dt").first).to_be_visible()  # the trial's data arrives after the page
            rewards = {dt.inner_text().strip(): dt.locator("xpath=following-sibling::dd[1]").inner_text().strip()
                       for dt in page.locator("dl dt").all()}
            assert rewards == {"reward": "1.00", "tests": "1.00"}
            expect(page.get_by_role("tab", name="Trajectory")).to_have_attribute("aria-selected", "true")
            panel = page.get_by_role("tabpanel")
            expect(panel).to_contain_text("7 steps")
            panel.get_by_role("button", name="Expand all").click()
            expect(panel).to_contain_text("Episode ended (finished); reward 1.000, tests 1.000")
            # "Expand all" opens the steps one by one: under a loaded machine the last step can be open before the
            # earlier ones (a clean-clone CI run read the panel then), so wait for each step this test reads
            for shown in (HOSTILE_COMMAND, "no action here", "mean=16.00"):  # (text without escape codes)
                expect(panel).to_contain_text(shown)
            text = panel.inner_text()

            assert HOSTILE_COMMAND in text  # the command as the model wrote it
            assert HOSTILE_OUTPUT in text  # its output, tags and escape codes as literal characters
            assert "ls: cannot access '/nope': No such file or directory\n[exit code: 2]" in text
            assert "no action here" in text and "<format_error>\nNo action found in your reply." in text
            assert "mean=16.00\nmax=42.00\n[exit code: 0]" in text  # the reference solution's run
            assert "<finish_output>\nEpisode finished.\n</finish_output>" in text

            # shown as text: no script element came from the output, alert() never ran, no dialog opened
            assert page.locator("script", has_text="alert(1)").count() == 0
            assert page.evaluate("window.__terminalAgentAlerted") is None
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.content()

            # the grader's side of the same trial: the verifier folder's files, the test output among them
            page.get_by_role("tab", name="Verifier").click()
            page.get_by_role("treeitem", name="test-stdout.txt").click()
            expect(page.get_by_role("tabpanel")).to_contain_text("PASSED")
        finally:
            browser.close()
    assert dialogs == []
