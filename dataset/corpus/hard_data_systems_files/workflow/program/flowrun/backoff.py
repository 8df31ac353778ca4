"""Retry policy: how long to wait before each retry of a failed job.

A job with ``retries: N`` runs at most N + 1 times. Before retry k (k = 1 for the first retry, the second run of
the job) the runner waits ``base * factor ** (k - 1)`` seconds, never more than ``max``: with base 1, factor 2 and
max 5 the waits are 1, 2, 4, 5, 5, ...
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class BackoffPolicy:
    base: float = 1.0
    factor: float = 2.0
    max_delay: float = 60.0

    def delay(self, retry):
        """Seconds to wait before retry number ``retry`` (1-based)."""
        if retry < 1:
            raise ValueError(f"retry numbers start at 1, not {retry}")
        return min(self.base * self.factor ** (retry - 1), self.max_delay)

    def delays(self, retries):
        """The waits before each of ``retries`` retries."""
        return [self.delay(k) for k in range(1, retries + 1)]
