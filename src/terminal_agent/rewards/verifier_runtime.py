"""The offline verifier runtime: what a network-installing ``tests/test.sh`` needs, provided by the host.

A TB2 test script installs curl and uv over the network and runs
``uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json ...``.
Training clusters are offline, so the grader hands the verifier a runtime instead:

* the host's pytest stack (the cached :mod:`~terminal_agent.rewards.verifier_bundle` zip) for ``pytest``;
* every other tool the test scripts name (``uvx -w X``, ``uv run --with X``, ``pip install X``; plus the CTRF
  plugin whenever a script passes ``--ctrf``) as wheels, fetched ONCE by the host (a wheelhouse directory
  first, then the package registry it reaches through ``pip download``) and cached on disk by requirement:
  pure-Python wheels first; where a tool has none (``numpy``), the wheels built for the interpreter the verifier
  runs under (:mod:`~terminal_agent.rewards.target_python`: the sandbox's python3, asked by the grader; CPython
  3.11 of the bookworm images is the host's own and fetched with pip's own tags, CPython 3.13 of the trixie
  stand-in with explicit ones, each cached under its own key), at most ``HarborGradingConfig.max_compiled_bytes``.
  Pure wheels are imported in place (zipimport); a compiled one is shipped unpacked and used only where the
  image's python matches its tags; nothing is installed;
* ``uv``/``uvx``/``pytest`` stand-ins (``assets/uv_standin.py``) that run the requested tools from it, and,
  offline, shims for ``apt-get``/``apt``/``curl``/``wget``/``pip`` (``assets/offline_shims.py``) that make the
  install steps harmless and log what they skipped or could not do.

:func:`plan_runtime` decides what is provided and records every substitution (``pytest==8.4.1 -> host pytest
9.0.3``); the runner and the stand-ins report the rest (the Python version) from inside the sandbox.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from terminal_agent.errors import GradingError
from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.rewards.target_python import TargetPython
from terminal_agent.rewards.verifier_bundle import BUNDLED_DISTRIBUTIONS, default_cache_dir

logger = logging.getLogger(__name__)

BUNDLE_PROVIDES = frozenset(BUNDLED_DISTRIBUTIONS) - {"pygments"}
"""Distributions the pytest bundle carries whole (their wheels are never fetched; pins become substitutions).
pygments is left out: the bundle has only the few modules pytest imports, so a tool that needs it gets the wheel."""
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
_PIN = re.compile(r"^==\s*([A-Za-z0-9.+!*_-]+)\s*$")
_lock = threading.Lock()
_memo: dict[str, "ToolWheels"] = {}
_failed: dict[str, str] = {}
"""Requirement key -> why it could not be had: asked once per process (a registry may come back later)."""


def canonical_name(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Requirement:
    """One tool a test script asks for."""

    spec: str
    """As written (``rdflib==7.1.4``, ``numpy``); a ``name@version`` spelling is rewritten to ``name==version``."""
    name: str
    """Canonical distribution name."""
    pinned: str | None
    """The ``==`` version, when exactly pinned."""
    origin: str
    """``uvx -w``, ``uvx tool``, ``pip install``, ``--ctrf``."""


def parse_requirement(spec: str, origin: str) -> Requirement | None:
    """A :class:`Requirement` for ``spec``; None for what is not a package name (a path, a URL, an option)."""
    text = spec.strip()
    if not text or text.startswith(("-", ".", "/", "~")) or "://" in text or text.endswith((".txt", ".whl", ".tar.gz")):
        return None
    if "@" in text and "==" not in text and not text.startswith("@"):
        name_part, _, version = text.partition("@")
        if version and not version.startswith(("http", "git", "file")):
            text = f"{name_part}=={version}"
        else:
            return None
    match = _NAME.match(text)
    if not match:
        return None
    pin = _PIN.match(match.group(3) or "")
    return Requirement(text, canonical_name(match.group(1)), pin.group(1) if pin else None, origin)


# --- what the scripts ask for -------------------------------------------------------------------
_UV_OPTIONS_WITH_VALUE = {
    "-p", "--python", "--from", "--index-url", "-i", "--extra-index-url", "--index", "--default-index",
    "--find-links", "-f", "--cache-dir", "--with-editable", "--with-requirements", "--constraints", "-c",
    "--overrides", "--directory", "--project", "--env-file", "--python-preference", "--color", "--config-file",
    "--resolution", "--prerelease", "--exclude-newer", "--index-strategy", "--keyring-provider", "--link-mode",
}
_PIP_OPTIONS_WITH_VALUE = {
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "-r", "--requirement",
    "-t", "--target", "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi",
    "--cache-dir", "--src", "--upgrade-strategy", "--progress-bar", "--log", "--timeout", "--retries",
    "--trusted-host", "--proxy", "--cert", "--client-cert", "--only-binary", "--no-binary", "-e", "--editable",
}


def _logical_lines(script: str) -> list[str]:
    return script.replace("\\\r\n", " ").replace("\\\n", " ").splitlines()


def _commands(line: str) -> list[list[str]]:
    """Words of each simple command on a line (split at ``;``, ``&&``, ``||``, ``|``); comments dropped."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError:
        return []
    commands: list[list[str]] = [[]]
    for word in words:
        if word and set(word) <= set(";&|()"):
            commands.append([])
        else:
            commands[-1].append(word)
    return [command for command in commands if command]


def _uv_requirements(args: list[str]) -> tuple[list[Requirement], bool]:
    """Requirements of the arguments after ``uvx`` / ``uv tool run`` / ``uv run``; whether a tool was named."""
    found: list[Requirement] = []
    index = 0
    source_given = False
    while index < len(args):
        word = args[index]
        value: str | None = None
        if word in ("-w", "--with") and index + 1 < len(args):
            value, index = args[index + 1], index + 2
        elif word.startswith("--with="):
            value, index = word.split("=", 1)[1], index + 1
        elif word.startswith("-w") and len(word) > 2:
            value, index = word[2:], index + 1
        elif word == "--from" and index + 1 < len(args):
            requirement = parse_requirement(args[index + 1], "uvx --from")
            found += [requirement] if requirement else []
            source_given = True
            index += 2
            continue
        elif word in _UV_OPTIONS_WITH_VALUE:
            index += 2
            continue
        elif word.startswith("-"):
            index += 1
            continue
        else:
            tool = None if source_given else parse_requirement(word, "uvx tool")  # --from names the package
            if tool is not None and tool.name not in ("python", "python3"):
                found.append(tool)
            return found, True
        for part in (value or "").split(","):
            requirement = parse_requirement(part, "uvx -w")
            if requirement:
                found.append(requirement)
    return found, False


def _pip_requirements(args: list[str]) -> list[Requirement]:
    found: list[Requirement] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word in _PIP_OPTIONS_WITH_VALUE:
            index += 2
            continue
        if not word.startswith("-"):
            requirement = parse_requirement(word, "pip install")
            if requirement:
                found.append(requirement)
        index += 1
    return found


def scan_scripts(files: dict[str, str | bytes], ctrf_plugin: str) -> list[Requirement]:
    """Every tool the test files' shell scripts ask for, in order, without repeats (by spec)."""
    found: list[Requirement] = []
    wants_ctrf = False
    for path, content in sorted(files.items()):
        if not isinstance(content, str) or not (path.endswith(".sh") or content.startswith("#!")):
            continue
        wants_ctrf = wants_ctrf or "--ctrf" in content
        for line in _logical_lines(content):
            for words in _commands(line):
                while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                    words = words[1:]  # VAR=value prefixes
                while words and words[0] in ("exec", "time", "sudo", "command", "nohup"):
                    words = words[1:]
                if not words:
                    continue
                program = os.path.basename(words[0])
                if program == "uvx":
                    found += _uv_requirements(words[1:])[0]
                elif program == "uv" and words[1:3] == ["tool", "run"]:
                    found += _uv_requirements(words[3:])[0]
                elif program == "uv" and words[1:2] == ["run"]:
                    found += [r for r in _uv_requirements(words[2:])[0] if r.origin == "uvx -w"]
                elif program == "uv" and words[1:3] == ["pip", "install"]:
                    found += _pip_requirements(words[3:])
                elif re.match(r"^pip3?(\.\d+)?$", program) and words[1:2] == ["install"]:
                    found += _pip_requirements(words[2:])
                elif re.match(r"^python3?(\.\d+)?$", program) and words[1:4] == ["-m", "pip", "install"]:
                    found += _pip_requirements(words[4:])
    if wants_ctrf:
        ctrf = parse_requirement(ctrf_plugin, "--ctrf")
        if ctrf is not None and not any(r.name == ctrf.name for r in found):
            found.append(ctrf)
    unique: dict[str, Requirement] = {}
    for requirement in found:
        unique.setdefault(requirement.spec, requirement)
    return list(unique.values())


# --- fetching and caching -----------------------------------------------------------------------
@dataclass(frozen=True)
class Wheel:
    """One pure-Python wheel of the runtime."""

    filename: str
    data: bytes
    distribution: str
    version: str
    requires: tuple[str, ...] = ()
    """Canonical names of its ``Requires-Dist`` dependencies."""
    pytest_plugins: tuple[str, ...] = ()
    """Modules of its ``pytest11`` entry points (loaded with ``-p``; plugin autoload stays off)."""
    console_scripts: tuple[tuple[str, str], ...] = ()
    """(script name, ``module:function``)."""

    @property
    def compiled(self) -> bool:
        """Built for one interpreter and platform (shipped unpacked, used only where the image's python fits)."""
        return not _is_pure(self.filename)


@dataclass(frozen=True)
class ToolWheels:
    """The wheels that satisfy one requirement (itself and its dependencies, minus what the bundle has)."""

    requirement: str
    wheels: tuple[Wheel, ...]
    dropped: tuple[str, ...] = ()
    """Dependencies left out because the pytest bundle provides them (``pytest 9.2.0``: the host's serves)."""


class ToolUnavailable(Exception):
    """A requirement could not be provided as wheels; the message says why."""


def _wheel_metadata(filename: str, data: bytes) -> Wheel:
    import io

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        info_dir = next((n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")), None)
        if info_dir is None:
            raise ToolUnavailable(f"{filename} has no .dist-info")
        metadata = archive.read(f"{info_dir}/METADATA").decode("utf-8", "replace")
        entry_points = archive.read(f"{info_dir}/entry_points.txt").decode("utf-8", "replace") if f"{info_dir}/entry_points.txt" in names else ""
    fields = dict(
        line.split(": ", 1) for line in metadata.splitlines() if ": " in line and not line.startswith(" ")
    )
    requires = tuple(
        canonical_name(re.split(r"[\s;<>=!~\[(]", line.split(": ", 1)[1].strip(), 1)[0])
        for line in metadata.splitlines() if line.startswith("Requires-Dist: ")
    )
    plugins: list[str] = []
    scripts: list[tuple[str, str]] = []
    section = ""
    for line in entry_points.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif "=" in line and section in ("pytest11", "console_scripts"):
            key, value = (part.strip() for part in line.split("=", 1))
            if section == "pytest11":
                plugins.append(value.split(":", 1)[0])
            else:
                scripts.append((key, value.split("[", 1)[0].strip()))
    return Wheel(filename, data, canonical_name(fields.get("Name", filename.split("-")[0])), fields.get("Version", "?"),
                 requires, tuple(plugins), tuple(scripts))


def _is_pure(filename: str) -> bool:
    return filename.endswith(".whl") and filename[:-4].split("-")[-1] == "any" and filename[:-4].split("-")[-2] == "none"


def _dir_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:  # pip moves its temporary files while we count
                pass
    return total


def _run_pip(command: list[str], scratch: Path, timeout: float, max_bytes: int | None) -> tuple[int, str]:
    """Run ``pip download`` with its temporary files in ``scratch``; stop it past ``timeout`` or ``max_bytes``."""
    env = {**os.environ, "TMPDIR": str(scratch), "PIP_NO_CACHE_DIR": "1"}
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)
        started = time.monotonic()
        while process.poll() is None:
            if time.monotonic() - started > timeout:
                process.kill()
                process.wait()
                return -1, f"timed out after {timeout:.0f} s"
            if max_bytes is not None and _dir_bytes(scratch) > max_bytes:
                process.kill()
                process.wait()
                return -1, f"larger than the {max_bytes // (1024 * 1024)} MiB allowed for compiled wheels"
            time.sleep(0.2)
        output.seek(0)
        text = output.read().decode("utf-8", "replace").strip()
    return process.returncode, (text.splitlines()[-1] if text else f"exit {process.returncode}")


def _pip_download(requirement: str, dest: Path, sources: list[list[str]], timeout: float,
                  max_compiled_bytes: int = 0, target: TargetPython | None = None) -> str:
    """Run ``pip download`` with each source's options until one succeeds; the last errors otherwise.

    Pure-Python wheels first, chosen by tag (a compiled package fails at once instead of downloading
    megabytes); then, when ``max_compiled_bytes`` allows, the wheels for the host's interpreter and platform
    (``target`` None), or those of ``target`` (its explicit tags; none for a target no compiled wheel serves).
    """
    errors = []
    host_pure = ["--platform", "any", "--implementation", "py", "--abi", "none"]
    pure = target.pure_tags() if target is not None else host_pure
    attempts: list[tuple[str, list[str], int | None]] = [("pure", pure, None)]
    if max_compiled_bytes > 0 and (target is None or target.compiled_ok):
        attempts.append(("compiled", target.compiled_tags() if target is not None else [], max_compiled_bytes))
    for label, tags, limit in attempts:
        for options in sources:
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir(parents=True)
            command = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-input", "--quiet",
                       "--only-binary=:all:", *tags, "--dest", str(dest / "wheels"), *options, requirement]
            code, message = _run_pip(command, dest, timeout, limit)
            if code == 0:
                return ""
            errors.append(f"{label}: {message}" if len(attempts) > 1 else message)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    return "; ".join(errors) or "no source to fetch from (no wheelhouse, registry disabled)"


def tool_cache_dir(config: HarborGradingConfig) -> Path:
    return Path(config.tool_cache_dir) if config.tool_cache_dir else default_cache_dir().parent / "harbor-tools"


def fetch_key(requirement: Requirement, target: TargetPython | None = None) -> str:
    """The tool cache's directory name for ``requirement`` fetched for ``target``: the requirement alone for the
    host's own interpreter (None, or a target that matches the host: the key the cache always had), the
    requirement and :attr:`TargetPython.key` for any other."""
    text = requirement.spec if target is None or target.matches_host else f"{requirement.spec}|{target.key}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def fetch_tool(requirement: Requirement, config: HarborGradingConfig, target: TargetPython | None = None) -> ToolWheels:
    """The wheels of ``requirement`` for ``target`` (None: the host's interpreter), from memory, the disk cache,
    or fetched now (then cached).

    Raises :class:`ToolUnavailable` when it cannot be fetched (pure, or compiled within the size allowed); the
    message names the requirement and, for a target other than the host, the python it was wanted for.
    """
    if target is not None and target.matches_host:
        target = None  # pip's own tags on the host: the same wheels, the same cache entry as always
    key = fetch_key(requirement, target)
    # remembered per cache and sources: another cache (a prefetch into a new directory) or another wheelhouse
    # must look for itself, not take the answer another configuration got
    memo_key = f"{tool_cache_dir(config)}|{config.wheelhouse}|{config.use_registry}|{key}"
    with _lock:
        if memo_key in _memo:
            return _memo[memo_key]
        if memo_key in _failed:
            raise ToolUnavailable(_failed[memo_key])
        try:
            tool = _fetch_locked(requirement, config, key, target)
        except ToolUnavailable as exc:
            _failed[memo_key] = str(exc)
            raise
        _memo[memo_key] = tool
        return tool


def _fetch_locked(requirement: Requirement, config: HarborGradingConfig, key: str,
                  target: TargetPython | None) -> ToolWheels:
    """:func:`fetch_tool` under its lock: the disk cache, else ``pip download`` (then cached)."""
    cache = tool_cache_dir(config) / key
    manifest = cache / "tool.json"
    if manifest.is_file():
        recorded = json.loads(manifest.read_text())
        return ToolWheels(recorded["requirement"], tuple(_wheel_metadata(name, (cache / name).read_bytes())
                                                        for name in recorded["wheels"]),
                          tuple(recorded.get("dropped", ())))
    sources: list[list[str]] = []
    if config.wheelhouse:
        sources.append(["--no-index", "--find-links", config.wheelhouse])
    if config.use_registry:
        sources.append([])
    with tempfile.TemporaryDirectory(prefix="ta-harbor-tool-") as scratch:
        work = Path(scratch) / "download"
        error = (_pip_download(requirement.spec, work, sources, config.fetch_timeout_s, config.max_compiled_bytes,
                               target) if sources else "no source")
        if error:
            wanted_for = f" for {target.describe()}" if target is not None else ""
            if target is not None and not target.compiled_ok and config.max_compiled_bytes > 0:
                wanted_for += " (pure-Python wheels only: the runtime's compiled wheels need CPython with glibc)"
            raise ToolUnavailable(f"cannot fetch {requirement.spec}{wanted_for} on the host: {error}")
        files = sorted((work / "wheels").iterdir())
        not_wheels = [f.name for f in files if not f.name.endswith(".whl")]
        if not_wheels:
            raise ToolUnavailable(f"{requirement.spec} came as {', '.join(not_wheels)}, not as wheels")
        wheels: list[Wheel] = []
        dropped: list[str] = []
        read = [_wheel_metadata(path.name, path.read_bytes()) for path in files]
        wanted_directly = {name for wheel in read if wheel.distribution not in BUNDLE_PROVIDES for name in wheel.requires}
        for wheel in read:
            # the bundle serves pytest's stack; pygments too (its part pytest uses) unless a tool itself needs it
            bundled = wheel.distribution in BUNDLE_PROVIDES or (wheel.distribution == "pygments" and "pygments" not in wanted_directly)
            if bundled and wheel.distribution != requirement.name:
                dropped.append(f"{wheel.distribution} {wheel.version}")
            else:
                wheels.append(wheel)
        tool = ToolWheels(requirement.spec, tuple(wheels), tuple(dropped))
        try:
            cache.mkdir(parents=True, exist_ok=True)
            for wheel in wheels:
                (cache / wheel.filename).write_bytes(wheel.data)
            tmp = manifest.with_suffix(f".tmp{os.getpid()}")
            entry: dict[str, Any] = {"requirement": tool.requirement, "wheels": [w.filename for w in wheels],
                                     "dropped": list(dropped)}
            if target is not None:
                entry["target"] = target.key
            tmp.write_text(json.dumps(entry))
            os.replace(tmp, manifest)
        except OSError as exc:  # a read-only cache only costs a fetch next time
            logger.warning("could not cache %s at %s: %s", requirement.spec, cache, exc)
            shutil.rmtree(cache, ignore_errors=True)
    return tool


# --- the plan handed to the sandbox ------------------------------------------------------------
@dataclass
class RuntimePlan:
    """What the runtime provides for one task."""

    wheels: dict[str, Wheel] = field(default_factory=dict)
    """filename -> wheel, every wheel shipped."""
    provided: dict[str, list[str]] = field(default_factory=dict)
    """canonical distribution name -> wheel filenames that provide it (itself first, then its dependencies)."""
    bundled: list[str] = field(default_factory=list)
    """Requirements the pytest bundle stands in for."""
    unavailable: dict[str, str] = field(default_factory=dict)
    """canonical name -> why it cannot be provided (the image's own copy is used if it has one)."""
    substitutions: list[str] = field(default_factory=list)
    """Human-readable: what the verifier gets instead of what it pinned."""

    def manifest(self, interpreter: str, host_pytest: str) -> dict[str, Any]:
        """The JSON the stand-ins read (``runtime/manifest.json``)."""
        return {
            "interpreter": interpreter,
            "host_pytest": host_pytest,
            "provided": self.provided,
            "bundled": sorted(self.bundled),
            "unavailable": self.unavailable,
            "wheels": {
                name: {"distribution": w.distribution, "version": w.version, "pytest_plugins": list(w.pytest_plugins),
                       "console_scripts": [list(s) for s in w.console_scripts], "compiled": w.compiled}
                for name, w in self.wheels.items()
            },
        }


def host_pytest_version() -> str:
    return importlib.metadata.version("pytest")


def needs_wheels(requirements: list[Requirement]) -> bool:
    """Whether any of ``requirements`` is fetched as wheels (the pytest bundle serves the others): only then does
    the grader ask the sandbox which python the wheels are for."""
    return any(requirement.name not in BUNDLE_PROVIDES for requirement in requirements)


def plan_runtime(requirements: list[Requirement], config: HarborGradingConfig,
                 target: TargetPython | None = None) -> RuntimePlan:
    """Fetch (or take from the cache) what ``requirements`` need for ``target`` (None: the host's interpreter);
    record substitutions and what is missing."""
    plan = RuntimePlan()
    host_versions = {name: importlib.metadata.version(name) for name in BUNDLE_PROVIDES}
    for requirement in requirements:
        if requirement.name in BUNDLE_PROVIDES:
            plan.bundled.append(requirement.name)
            host = host_versions[requirement.name]
            if requirement.pinned is not None and requirement.pinned != host:
                note = f"{requirement.spec} -> host {requirement.name} {host}"
                if note not in plan.substitutions:
                    plan.substitutions.append(note)
            continue
        try:
            tool = fetch_tool(requirement, config, target)
        except ToolUnavailable as exc:
            plan.unavailable[requirement.name] = str(exc)
            plan.substitutions.append(f"{requirement.spec} -> the image's own copy, if any ({exc})")
            continue
        names = []
        for wheel in tool.wheels:
            plan.wheels[wheel.filename] = wheel
            names.append(wheel.filename)
        own = [w for w in tool.wheels if w.distribution == requirement.name]
        names.sort(key=lambda filename: filename not in {w.filename for w in own})
        plan.provided[requirement.name] = names
        if requirement.pinned is None and own:
            plan.substitutions.append(f"{requirement.spec} (unpinned) -> {own[0].version}")
    return plan


def asset(name: str) -> bytes:
    return resources.files("terminal_agent.rewards").joinpath("assets", name).read_bytes()


def unpacked_wheel(root: str, data: bytes, name: str) -> list[tuple[str, bytes | str | None, int]]:
    """Tar entries of a wheel's files under ``root`` (directories first); refuses names that leave it."""
    import io
    import zipfile

    entries: list[tuple[str, bytes | str | None, int]] = [(root, None, 0o755)]
    made = {root}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            parts = info.filename.split("/")
            if info.filename.startswith("/") or any(part in ("..", "") for part in parts[:-1]) or "\\" in info.filename:
                raise GradingError(f"wheel {name} holds an unsafe path {info.filename!r}")
            if info.is_dir() or not parts[-1]:
                continue
            for depth in range(1, len(parts)):
                folder = posixpath.join(root, *parts[:depth])
                if folder not in made:
                    made.add(folder)
                    entries.append((folder, None, 0o755))
            mode = 0o755 if (info.external_attr >> 16) & 0o111 else 0o644
            entries.append((posixpath.join(root, *parts), archive.read(info), mode))
    return entries
