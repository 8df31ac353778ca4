import json
import os
import tempfile
import unittest

from flowrun.clock import Sleeper
from flowrun.scheduler import Scheduler
from flowrun.spec import parse_workflow
from flowrun.state import StateStore
from flowrun.report import run_status, status_text


class RunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.store = StateStore(os.path.join(self.dir, "state.sqlite"))

    def tearDown(self):
        self.store.close()
        self.tmp.cleanup()

    def workflow(self, jobs):
        return parse_workflow({"name": "unit", "jobs": jobs}, "unit.json", self.dir)

    def run_workflow(self, jobs):
        return Scheduler(self.store, Sleeper(0)).start(self.workflow(jobs))

    def trace(self):
        path = os.path.join(self.dir, "trace")
        return open(path).read().split() if os.path.exists(path) else []

    def test_jobs_run_in_order(self):
        summary = self.run_workflow({
            "c": {"command": "echo c >> trace", "deps": ["a", "b"]},
            "a": {"command": "echo a >> trace"},
            "b": {"command": "echo b >> trace", "deps": ["a"]},
        })
        self.assertEqual(summary.status, "succeeded")
        self.assertEqual(self.trace(), ["a", "b", "c"])
        status = run_status(self.store, summary.run_id)
        self.assertEqual({job: info["status"] for job, info in status["jobs"].items()},
                         {"a": "succeeded", "b": "succeeded", "c": "succeeded"})

    def test_failure_skips_dependents_only(self):
        summary = self.run_workflow({
            "a": {"command": "exit 3"},
            "b": {"command": "echo b >> trace", "deps": ["a"]},
            "c": {"command": "echo c >> trace"},
        })
        self.assertEqual((summary.status, summary.failed, summary.skipped), ("failed", ["a"], ["b"]))
        self.assertEqual(self.trace(), ["c"])
        attempts = self.store.attempts(summary.run_id, "a")
        self.assertEqual([(a.attempt, a.exit_code) for a in attempts], [(1, 3)])

    def test_environment_and_logs(self):
        summary = self.run_workflow({"a": {"command": "echo $FLOWRUN_JOB:$FLOWRUN_ATTEMPT:$MODE", "env": {"MODE": "x"}}})
        log = os.path.join(self.dir, "logs", f"run-{summary.run_id}", "a.1.log")
        self.assertEqual(open(log).read(), "a:1:x\n")

    def test_timeout(self):
        summary = self.run_workflow({"slow": {"command": "sleep 5", "timeout": 0.2}})
        (attempt,) = self.store.attempts(summary.run_id, "slow")
        self.assertTrue(attempt.timed_out)
        self.assertEqual(attempt.exit_code, 124)

    def test_status_text(self):
        summary = self.run_workflow({"only": {"command": "true"}})
        text = status_text(self.store, summary.run_id)
        self.assertTrue(text.startswith(f"run {summary.run_id} (unit): succeeded"))
        self.assertIn("attempts 1 [0]", text)
        self.assertEqual(json.loads(json.dumps(run_status(self.store, summary.run_id)))["status"], "succeeded")


if __name__ == "__main__":
    unittest.main()
