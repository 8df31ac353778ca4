"""The GPU path's lock, ``requirements/gpu-py312.lock``, read and compared with what is installed.

    pins = read_lock(LOCK_PATH)                     # {"torch": "2.11.0", "vllm": "0.24.0", ...} (canonical names)
    lock_differences(pins)                          # [LockDifference("torch", "2.11.0", "2.13.0+cpu"), ...]

Standard library only, and runnable by path before this package is installed (``scripts/setup_gpu.sh`` asks it
whether the lock's packages are in place: ``python src/terminal_agent/training/gpu_lock.py LOCK`` exits 0 when
every entry is installed at its version, else 1 with a summary line).
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

#: The lock of a checkout (absent from a non-editable install of the package).
LOCK_PATH = Path(__file__).resolve().parents[3] / "requirements" / "gpu-py312.lock"

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def canonical_name(name: str) -> str:
    """A distribution name as the package index compares it (PEP 503: case and runs of ``-_.`` folded)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path = LOCK_PATH) -> dict[str, str]:
    """``{canonical name: version}`` of every ``name==version`` line of a pip-compile lock (hash lines skipped)."""
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        match = _PIN.match(line)
        if match:
            pins[canonical_name(match.group(1))] = match.group(2)
    return pins


def installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class LockDifference:
    """One lock entry that is not installed at its version."""

    name: str
    locked: str
    installed: str | None
    """The installed version; None: not installed."""

    def describe(self) -> str:
        if self.installed is None:
            return f"{self.name} not installed"
        return f"{self.name} {self.installed} (lock {self.locked})"


def same_release(installed: str, locked: str) -> bool:
    """``installed`` satisfies ``==locked``: a local label (``2.11.0+cu130``) matches its public version."""
    return installed.split("+", 1)[0] == locked


def lock_differences(pins: Mapping[str, str],
                     version_of: Callable[[str], str | None] = installed_version) -> list[LockDifference]:
    """The entries of ``pins`` not installed at their version, in the lock's order."""
    differences = []
    for name, locked in pins.items():
        found = version_of(name)
        if found is None or not same_release(found, locked):
            differences.append(LockDifference(name, locked, found))
    return differences


def summarize(differences: list[LockDifference], total: int, *, shown: int = 4) -> str:
    """One line: how many of ``total`` entries differ, the first ``shown`` of them named."""
    named = ", ".join(difference.describe() for difference in differences[:shown])
    more = f" and {len(differences) - shown} more" if len(differences) > shown else ""
    return f"{len(differences)} of the lock's {total} packages differ: {named}{more}"


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else LOCK_PATH
    pins = read_lock(path)
    differences = lock_differences(pins)
    if differences:
        print(summarize(differences, len(pins)))
        return 1
    print(f"all {len(pins)} packages of {path.name} are installed at their versions")
    return 0


__all__ = ["LOCK_PATH", "LockDifference", "canonical_name", "installed_version", "lock_differences", "read_lock",
           "same_release", "summarize"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
