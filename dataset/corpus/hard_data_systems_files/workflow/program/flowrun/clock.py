"""Time for the runner: wall-clock timestamps and (scaled) sleeping between retries."""

import time
from datetime import datetime, timezone


def now_iso():
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Sleeper:
    """Sleeps ``seconds * scale``: scale 0 skips the waits (tests, dry runs) while the planned delays are still
    recorded unscaled."""

    def __init__(self, scale=1.0):
        if scale < 0:
            raise ValueError(f"the time scale must be >= 0, not {scale}")
        self.scale = scale
        self.slept = []

    def sleep(self, seconds):
        self.slept.append(seconds)
        if seconds > 0 and self.scale > 0:
            time.sleep(seconds * self.scale)
