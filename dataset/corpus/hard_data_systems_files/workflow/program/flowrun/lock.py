"""An advisory lock beside the state database, so that two runners never drive the same run at once.

``run`` and ``resume`` hold ``<db>.lock`` (fcntl.flock, exclusive, non-blocking) while they execute; a second
runner fails at once with a clear message instead of interleaving its attempts with the first one's.
"""

import fcntl
import os

from .errors import FlowrunError


class LockBusyError(FlowrunError):
    def __init__(self, path, holder):
        super().__init__(f"another flowrun process{f' (pid {holder})' if holder else ''} holds {path}")
        self.path = path


class RunnerLock:
    def __init__(self, db_path):
        self.path = os.path.abspath(db_path) + ".lock"
        self._handle = None

    def acquire(self):
        handle = open(self.path, "a+")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip()
            handle.close()
            raise LockBusyError(self.path, holder) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._handle = handle
        return self

    def release(self):
        if self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
