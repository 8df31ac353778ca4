"""The Python a verifier runs under, as the offline verifier runtime fetches wheels for it.

The runtime's compiled wheels (``numpy``) import only on the interpreter and platform they were built for. The host
fetches them once and caches them (:mod:`terminal_agent.rewards.verifier_runtime`); this module says for which
interpreter: the sandbox's own python3, asked through the grading contract (``run_privileged``) once the grader has
chosen it, so a task whose image runs CPython 3.13 (``python:3.12*``-``3.14*`` stand in on Debian trixie's) gets
cp313 wheels while the host runs 3.11.

A target with the host's implementation, version and machine is fetched as before (pip's own tags, the cache key of
the requirement alone); any other is fetched with explicit tags (``--python-version``, ``--implementation cp``, its
ABIs and the manylinux platforms its glibc runs) and cached under a key that names them (:attr:`TargetPython.key`).
"""

from __future__ import annotations

import json
import platform
import sys
from dataclasses import dataclass

from terminal_agent.errors import GradingError
from terminal_agent.interfaces import GradingSandbox

PROBE = (
    "import json, os, platform, sys\n"
    "try:\n"
    "    libc = os.confstr('CS_GNU_LIBC_VERSION')\n"
    "except (AttributeError, ValueError, OSError):\n"
    "    libc = None\n"
    "print(json.dumps({'implementation': sys.implementation.name, 'version': list(sys.version_info[:2]),\n"
    "                  'machine': platform.machine(), 'libc': libc}))\n"
)
"""Run by the sandbox's interpreter (``-I -S -B``): what wheels it can import."""
PROBE_TIMEOUT_S = 30.0
_LEGACY_MANYLINUX = (("manylinux2014", 17), ("manylinux2010", 12), ("manylinux1", 5))
"""The manylinux names older than PEP 600, with the glibc minor (2.x) each needs."""


@dataclass(frozen=True)
class TargetPython:
    """The interpreter and platform the runtime's wheels must import on."""

    implementation: str
    """``sys.implementation.name`` (``cpython``, ``pypy``)."""
    version: tuple[int, int]
    """Major and minor version (``(3, 13)``)."""
    machine: str
    """``platform.machine()`` (``x86_64``, ``aarch64``)."""
    glibc: tuple[int, int] | None
    """The C library's glibc version; None on another libc (musl), where no manylinux wheel runs."""

    @property
    def version_text(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    @property
    def python_tag(self) -> str:
        return f"cp{self.version[0]}{self.version[1]}"

    @property
    def matches_host(self) -> bool:
        """Whether pip's own tags on the host (its interpreter, its machine) are this target's."""
        return (self.implementation == sys.implementation.name and self.version == tuple(sys.version_info[:2])
                and self.machine == platform.machine())

    @property
    def compiled_ok(self) -> bool:
        """Whether compiled wheels can serve it at all (the stand-in takes CPython manylinux wheels only)."""
        return self.implementation == "cpython" and self.glibc is not None

    @property
    def key(self) -> str:
        """What its wheels are cached under besides the requirement (``cp313-manylinux_2_41_x86_64``)."""
        if not self.compiled_ok:
            return f"{self.implementation}{self.version[0]}{self.version[1]}-pure"
        assert self.glibc is not None
        return f"{self.python_tag}-manylinux_{self.glibc[0]}_{self.glibc[1]}_{self.machine}"

    def describe(self) -> str:
        """In words, for error messages (``CPython 3.13 on x86_64 with glibc 2.41``)."""
        name = {"cpython": "CPython", "pypy": "PyPy"}.get(self.implementation, self.implementation)
        libc = f"glibc {self.glibc[0]}.{self.glibc[1]}" if self.glibc else "no glibc"
        return f"{name} {self.version_text} on {self.machine} with {libc}"

    def pure_tags(self) -> list[str]:
        """``pip download`` options of a pure-Python wheel for this target (its version decides Requires-Python)."""
        return ["--platform", "any", "--implementation", "py", "--abi", "none", "--python-version", self.version_text]

    def compiled_tags(self) -> list[str]:
        """``pip download`` options of a wheel built for this target: its CPython ABI (and abi3, none) on every
        manylinux platform its glibc runs, newest first, and ``linux_MACHINE`` (a wheelhouse's local builds)."""
        assert self.glibc is not None, "compiled wheels need glibc"
        options = ["--python-version", self.version_text, "--implementation", "cp"]
        for abi in (self.python_tag, "abi3", "none"):
            options += ["--abi", abi]
        major, minor = self.glibc
        platforms = [f"manylinux_{major}_{m}_{self.machine}" for m in range(minor, 4, -1)] if major == 2 else []
        platforms += [f"{name}_{self.machine}" for name, needs in _LEGACY_MANYLINUX if major == 2 and minor >= needs]
        platforms.append(f"linux_{self.machine}")
        for tag in platforms:
            options += ["--platform", tag]
        return options


def parse_probe(text: str) -> TargetPython:
    """The :class:`TargetPython` of :data:`PROBE`'s output. Raises ``ValueError`` on anything else."""
    info = json.loads(text.strip().splitlines()[-1])
    major, minor = (int(part) for part in info["version"])
    glibc = None
    libc = info.get("libc")
    if isinstance(libc, str) and libc.startswith("glibc "):
        parts = libc.split()[1].split(".")
        glibc = (int(parts[0]), int(parts[1]))
    return TargetPython(str(info["implementation"]), (major, minor), str(info["machine"]), glibc)


def probe_target_python(sandbox: GradingSandbox, interpreter: str) -> TargetPython:
    """Ask ``interpreter`` in ``sandbox`` what it is (one ``run_privileged``).

    Raises ``SandboxError`` when the sandbox is broken and :class:`GradingError` when the interpreter does not
    answer (the verifier could not run on it either).
    """
    run = sandbox.run_privileged([interpreter, "-I", "-S", "-B", "-c", PROBE], PROBE_TIMEOUT_S)
    if run.timed_out or run.exit_code != 0:
        raise GradingError(f"{interpreter} did not say which python it is (exit {run.exit_code}): {run.output[-500:]}")
    try:
        return parse_probe(run.output)
    except (ValueError, KeyError, TypeError, IndexError):
        raise GradingError(f"{interpreter} did not say which python it is: {run.output[-500:]!r}") from None


def host_target_python() -> TargetPython:
    """The host's own interpreter as a target (what the runtime fetched for before it asked the sandbox)."""
    try:
        libc = platform.libc_ver()
        glibc = tuple(int(p) for p in libc[1].split(".")[:2]) if libc[0] == "glibc" else None
    except (ValueError, OSError):
        glibc = None
    return TargetPython(sys.implementation.name, (sys.version_info[0], sys.version_info[1]), platform.machine(),
                        (glibc[0], glibc[1]) if glibc and len(glibc) == 2 else None)
