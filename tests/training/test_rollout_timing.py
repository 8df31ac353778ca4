"""Where a step's rollout time goes when the policy has nothing to sample: before the first model call
(sandboxes starting) and after the last reply (last commands, grading)."""

from __future__ import annotations

from terminal_agent.outcome import EpisodeOutcome, Termination
from terminal_agent.rollout.episode_record import EpisodeRecord
from terminal_agent.training.local.rollouts import RolloutBatch


def _record(first: float | None, last: float | None) -> EpisodeRecord:
    outcome = EpisodeOutcome(task_id="t", termination=Termination.FINISHED, scored=True, reward=1.0)
    return EpisodeRecord(outcome=outcome, attempt=0, first_call_at=first, last_reply_at=last)


def test_head_and_tail_come_from_the_earliest_call_and_the_latest_reply():
    batch = RolloutBatch(groups=[[_record(101.5, 104.0), _record(100.8, 106.5)], [_record(None, None)]],
                         wall_s=8.0, started_at=100.0)
    head, tail = batch.head_and_tail_s()
    assert abs(head - 0.8) < 1e-9 and abs(tail - 1.5) < 1e-9


def test_a_step_without_model_calls_has_no_head_or_tail():
    assert RolloutBatch(groups=[[_record(None, None)]], wall_s=1.0, started_at=5.0).head_and_tail_s() == (None, None)
