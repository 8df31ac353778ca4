"""The verifier bundle: the host's pure-Python pytest stack as one cached zip.

Graded containers never use their own pytest: the grader copies this bundle (pytest, _pytest,
pluggy, iniconfig, packaging, pytest-timeout, the parts of pygments pytest imports) into a fresh random
root-only directory after the episode, so nothing the agent installed can stand in for it.

The bundle is ONE zip file (imported by zipimport): copying one file into a container costs ~50 ms
where the same modules as 600 files cost ~0.5 s. It is built once per (package versions, Python
tag) and cached on disk and in memory; next to each source it carries unchecked-hash
byte code for the host's Python, so a container of the same minor version imports pytest without
compiling; another version ignores the byte code (magic mismatch) and compiles the sources.
"""

from __future__ import annotations

import hashlib
import importlib._bootstrap_external
import importlib.metadata
import importlib.util
import io
import logging
import os
import sys
import threading
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from terminal_agent.errors import GradingError

logger = logging.getLogger(__name__)

# distribution name -> top-level names it provides (files or packages)
BUNDLED_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "pytest": ("pytest", "_pytest", "py.py"),
    "pluggy": ("pluggy",),
    "iniconfig": ("iniconfig",),
    "packaging": ("packaging",),
    "pytest-timeout": ("pytest_timeout.py",),
    # pytest imports pygments at module level; only the modules its terminal writer loads
    "pygments": tuple(
        f"pygments/{name}.py"
        for name in (
            "__init__", "console", "filter", "formatter", "lexer", "modeline", "plugin", "regexopt",
            "style", "token", "unistring", "util", "filters/__init__", "formatters/__init__",
            "formatters/_mapping", "formatters/terminal", "lexers/__init__", "lexers/_mapping",
            "lexers/diff", "lexers/python", "styles/__init__", "styles/_mapping",
        )
    ),
}
RUNNER_ASSET = "verifier_runner.py"

_ZIP_DATE = (2020, 1, 1, 0, 0, 0)  # fixed, so the zip is byte-identical for the same inputs
_lock = threading.Lock()
_memo: dict[str, "VerifierBundle"] = {}


@dataclass(frozen=True)
class VerifierBundle:
    """A built bundle: the bytes of ``bundle.zip`` (put first on the verifier's ``sys.path``)."""

    data: bytes
    key: str
    """Content key (versions + Python tag); names the cache file."""
    versions: dict[str, str]
    python_tag: str


def runner_source() -> bytes:
    return resources.files("terminal_agent.rewards").joinpath("assets", RUNNER_ASSET).read_bytes()


def _distribution_root(name: str) -> tuple[Path, str]:
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise GradingError(f"the verifier needs {name!r} installed on the host (pip install {name})") from None
    return Path(str(dist.locate_file(""))), dist.version


def bundle_key() -> tuple[str, dict[str, str]]:
    versions = {name: _distribution_root(name)[1] for name in BUNDLED_DISTRIBUTIONS}
    digest = hashlib.sha256()
    digest.update(repr(sorted(versions.items())).encode())
    digest.update(sys.implementation.cache_tag.encode())
    return digest.hexdigest()[:20], versions


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "terminal-agent" / "verifier"


def _add_module(archive: zipfile.ZipFile, rel: str, source: bytes) -> None:
    """Source plus an unchecked-hash ``.pyc`` beside it (the layout zipimport reads)."""
    info = zipfile.ZipInfo(rel, date_time=_ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, source)
    if rel.endswith(".py"):
        code = compile(source, f"bundle.zip/{rel}", "exec", dont_inherit=True)
        pyc = importlib._bootstrap_external._code_to_hash_pyc(  # type: ignore[attr-defined]
            code, importlib.util.source_hash(source), checked=False
        )
        info = zipfile.ZipInfo(rel[:-3] + ".pyc", date_time=_ZIP_DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, bytes(pyc))


def build_bundle_bytes() -> tuple[bytes, dict[str, str]]:
    """Zip the host's pytest stack (sources and byte code for this Python) into ``bundle.zip``."""
    _, versions = bundle_key()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compresslevel=6) as archive:
        for dist_name, tops in BUNDLED_DISTRIBUTIONS.items():
            root, _ = _distribution_root(dist_name)
            for top in tops:
                src = root / top
                if not src.exists():
                    if top == "py.py" or dist_name == "pygments":  # optional, or absent in other versions
                        continue
                    raise GradingError(f"{dist_name}: {top} not found under {root}")
                files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
                for path in files:
                    rel = path.relative_to(root).as_posix()
                    if "__pycache__" in rel or rel.endswith((".pyc", ".pyo")):
                        continue
                    _add_module(archive, rel, path.read_bytes())
    logger.info("built verifier bundle (%d bytes)", buffer.tell())
    return buffer.getvalue(), versions


def get_bundle(cache_dir: Path | str | None = None) -> VerifierBundle:
    """The bundle for this host, from memory, the disk cache, or built now (about a second)."""
    key, versions = bundle_key()
    with _lock:
        if key in _memo:
            return _memo[key]
        cache = Path(cache_dir) if cache_dir else default_cache_dir()
        path = cache / f"bundle-{key}.zip"
        data: bytes | None = None
        if path.is_file():
            data = path.read_bytes()
        else:
            data, versions = build_bundle_bytes()
            try:
                cache.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".tmp{os.getpid()}")
                tmp.write_bytes(data)
                os.replace(tmp, path)
            except OSError as exc:  # a read-only cache only costs a rebuild next time
                logger.warning("could not cache the verifier bundle at %s: %s", path, exc)
        bundle = VerifierBundle(data=data, key=key, versions=versions, python_tag=sys.implementation.cache_tag)
        _memo[key] = bundle
        return bundle
