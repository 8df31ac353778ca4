"""``python -m terminal_agent.sandbox.bwrap.reaper OWNER_PID STATE_ROOT``: wait for the owner to die, then
remove the bwrap sandboxes it left (its processes die with it through ``--die-with-parent``; this
removes their cgroups and overlay directories). Started by ``state.ensure_reaper`` in its own session."""

from __future__ import annotations

import os
import select
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    owner, root = int(argv[1]), Path(argv[2])
    try:
        fd = os.pidfd_open(owner)
    except ProcessLookupError:
        fd = None
    if fd is not None:
        select.select([fd], [], [])  # readable when the owner has exited
        os.close(fd)
    from terminal_agent.sandbox.bwrap.state import sweep_leaked

    for _ in range(3):  # a sandbox whose process is still dying is caught by the next pass
        sweep_leaked(root)
        time.sleep(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
