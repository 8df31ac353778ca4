#!/usr/bin/env python3
"""Where a process's wall time went, from py-spy's folded stacks (``py-spy record -f raw --idle``).

    python training_scripts/device_run/summarize_profile.py PROFILE.txt [PROFILE2.txt ...] [--top 25]

Each input line is ``frame;frame;...;frame COUNT`` (outermost first). With ``--idle`` every sample counts, so
the shares are shares of wall time, waiting on the GPU (a synchronising copy, ``.item()``) included: a line of
Python that waits for kernels shows as time in that line. Printed per file: the sample count, the frames with
the largest inclusive share (each stack counted once per frame) and the largest self share (the innermost
frame).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

#: Frames that every stack of a Ray worker passes through: they say nothing about where the time went.
_PLUMBING = re.compile(r"(threading\.py|ray/_private/worker\.py|ray/_raylet|<module>|_bootstrap|main_loop|"
                       r"function_manager\.py|ray/util/tracing|concurrent/futures|asyncio/)")


def read_folded(path: Path) -> Counter[tuple[str, ...]]:
    stacks: Counter[tuple[str, ...]] = Counter()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks[tuple(stack.split(";"))] += int(count)
    return stacks


def summarize(stacks: Counter[tuple[str, ...]], top: int) -> str:
    total = sum(stacks.values())
    if not total:
        return "no samples"
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for stack, count in stacks.items():
        for frame in set(stack):
            if not _PLUMBING.search(frame):
                inclusive[frame] += count
        own[stack[-1]] += count
    lines = [f"{total} samples"]
    lines.append("inclusive (share of wall time under the frame):")
    lines += [f"  {100 * count / total:5.1f}%  {frame}" for frame, count in inclusive.most_common(top)]
    lines.append("self (innermost frame):")
    lines += [f"  {100 * count / total:5.1f}%  {frame}" for frame, count in own.most_common(top)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profiles", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    for path in args.profiles:
        print(f"== {path.name}")
        print(summarize(read_folded(path), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
