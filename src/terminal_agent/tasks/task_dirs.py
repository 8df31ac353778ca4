"""What the terminal-bench and Harbor directory formats share: files in and out (text or bytes), the
fresh task directory, required files, and the Task built from the parts a directory reader found.

Task folders are untrusted (downloaded datasets): every read goes through :func:`open_inside`, which
refuses a path that leaves the task folder - a ``..`` part, or a symlink anywhere on the way whose target
lies outside - and anything that is not a regular file (a FIFO would block a reader forever). Nothing
outside the task folder is ever opened. Sizes are bounded (:data:`~terminal_agent.tasks.model.MAX_FILE_BYTES`
per file, :data:`~terminal_agent.tasks.model.MAX_TASK_BYTES` per tree). Writers never follow a symlink
either: the output directory is made fresh, and each file is created with ``O_EXCL | O_NOFOLLOW``.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.model import (
    MAX_FILE_BYTES,
    MAX_FILES_PER_TASK,
    MAX_TASK_BYTES,
    FileContent,
    Task,
    check_relative_path,
    decoded_file,
    task_from_fields,
)


# --- writing -----------------------------------------------------------------------------------
def write_file(path: Path, content: FileContent, mode: int | None = None) -> None:
    """Create ``path`` with ``content`` (text as UTF-8 with line endings kept, or bytes), creating parents.

    Never follows a symlink and never replaces an existing file (``O_EXCL | O_NOFOLLOW``): writers fill a
    fresh directory. ``mode`` is applied when given (default 0o644).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            fd = -1
            handle.write(data)
    finally:
        if fd >= 0:
            os.close(fd)
    if mode is not None:
        os.chmod(path, mode)


def write_text_file(path: Path, text: FileContent, mode: int | None = None) -> None:
    """Alias of :func:`write_file` (kept for the format modules that write text)."""
    write_file(path, text, mode)


def write_tree(root: Path, files: dict[str, FileContent]) -> None:
    """Write every relative path -> content of ``files`` under ``root`` (the inverse of :func:`read_tree`).

    Each path is checked again (:func:`~terminal_agent.tasks.model.check_relative_path`): a Task built
    without validation cannot make a writer leave ``root``.
    """
    for relative, content in files.items():
        try:
            check_relative_path(relative)
        except ValueError as exc:
            raise TaskFormatError(str(exc), location=str(root), field="files") from None
        write_file(root / relative, content)


def fresh_task_dir(parent_dir: str | Path, task_id: str) -> Path:
    """``parent_dir/<task_id>``, created empty (an existing directory of that name is removed first)."""
    task_dir = Path(parent_dir) / task_id
    if task_dir.is_symlink():  # never follow a link planted where the task goes: remove the link itself
        task_dir.unlink()
    elif task_dir.exists():
        shutil.rmtree(task_dir)
    task_dir.mkdir(parents=True)
    return task_dir


# --- reading -----------------------------------------------------------------------------------
def _relative_name(path: Path, task_dir: Path) -> str:
    try:
        return path.relative_to(task_dir).as_posix()
    except ValueError:
        return str(path)


@functools.lru_cache(maxsize=1024)
def _real_root(task_dir: str) -> Path:
    """The real path of a task folder, remembered: a reader asks for it once per file it opens. A stale entry
    only ever makes the check stricter (the folder it names is the one that was checked)."""
    return Path(task_dir).resolve()


def resolve_inside(path: Path, task_dir: Path) -> Path:
    """The real path of ``path``, which must lie inside ``task_dir``; a TaskFormatError naming it otherwise.

    A symlink (at ``path`` or any parent) whose target leaves the task folder, and a ``..`` that does, are
    refused before anything is opened.
    """
    root = _real_root(os.path.abspath(task_dir))
    real = path.resolve()
    if real != root and root not in real.parents:
        what = "a symlink" if any(p.is_symlink() for p in [path, *path.parents] if p != p.parent) else "a path"
        raise TaskFormatError(
            f"{_relative_name(path, task_dir)} is {what} that leaves the task folder (to {real}); "
            "refused: a task may only use files inside its own folder",
            location=str(task_dir),
            field="files",
        )
    return real


def read_file(path: Path, task_dir: Path, *, limit: int = MAX_FILE_BYTES, walked: bool = False) -> bytes:
    """The bytes of ``path``, a regular file inside ``task_dir`` of at most ``limit`` bytes.

    Raises :class:`TaskFormatError` naming the file for a path or symlink leaving the task folder, anything
    but a regular file (FIFO, device, socket), a file over the bound, or one that cannot be read.
    ``walked``: ``path`` is a non-link entry that :func:`read_tree`'s walk (which never follows a link) found
    below a checked root, so it is inside without resolving it again; ``O_NOFOLLOW`` still refuses it should it
    have turned into a link since.
    """
    real = path if walked else resolve_inside(path, task_dir)
    name = _relative_name(path, task_dir)
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise TaskFormatError(f"cannot read {name}: {exc.strerror}", location=str(task_dir), field="files") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise TaskFormatError(f"{name} is not a regular file", location=str(task_dir), field="files")
        if info.st_size > limit:
            raise TaskFormatError(
                f"{name} is {info.st_size} bytes, more than the {limit} a task file may hold",
                location=str(task_dir), field="files",
            )
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TaskFormatError(f"{name} grew past {limit} bytes while read", location=str(task_dir), field="files")
    return data


def read_text_file(path: Path, task_dir: Path) -> str:
    """``path`` (inside ``task_dir``) decoded as UTF-8; a file that is not text raises TaskFormatError naming it.

    For the files a format defines as text (instruction, Dockerfile, task.toml, scripts); any other file of a
    task is read with :func:`read_tree`, which keeps bytes.
    """
    data = read_file(path, task_dir)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise TaskFormatError(
            f"{_relative_name(path, task_dir)} is not UTF-8 text (this file of the format must be text)",
            location=str(task_dir),
            field="files",
        ) from None


def read_tree(root: Path, task_dir: Path, skip: set[str] | None = None) -> dict[str, FileContent]:
    """Every file under ``root`` as relative path -> content (text when UTF-8, else bytes), skipping
    top-level names in ``skip``, ``__pycache__`` and ``.pyc``.

    Symlinks are not followed out of ``task_dir`` (a TaskFormatError naming the link); a link to a directory
    is not descended. Raises TaskFormatError past :data:`MAX_FILES_PER_TASK` files or :data:`MAX_TASK_BYTES`.
    """
    files: dict[str, FileContent] = {}
    if root.is_symlink() or root.exists():
        resolve_inside(root, task_dir)
    if not root.is_dir():
        return files
    total = 0
    for current, dirnames, filenames in os.walk(root, followlinks=False):
        current_path = Path(current)
        dirnames.sort()
        for name in list(dirnames):
            child = current_path / name
            relative = child.relative_to(root)
            if (skip and len(relative.parts) == 1 and name in skip) or name == "__pycache__":
                dirnames.remove(name)
            elif child.is_symlink():
                resolve_inside(child, task_dir)  # refuses one that leaves; one inside is not descended twice
                dirnames.remove(name)
        for name in sorted(filenames):
            path = current_path / name
            relative = path.relative_to(root)
            if (skip and len(relative.parts) == 1 and name in skip) or path.suffix == ".pyc":
                continue
            if len(files) >= MAX_FILES_PER_TASK:
                raise TaskFormatError(f"more than {MAX_FILES_PER_TASK} files under {_relative_name(root, task_dir)}",
                                      location=str(task_dir), field="files")
            data = read_file(path, task_dir, walked=not os.path.islink(path))
            total += len(data)
            if total > MAX_TASK_BYTES:
                raise TaskFormatError(f"the files under {_relative_name(root, task_dir)} pass {MAX_TASK_BYTES} bytes",
                                      location=str(task_dir), field="files")
            files[relative.as_posix()] = decoded_file(data)
    return dict(sorted(files.items()))


def require_file(task_dir: Path, relative: str, field: str, note: str = "") -> Path:
    """``task_dir/relative``; when it is not a file, a TaskFormatError ``no <relative><note>`` naming ``field``.

    A symlink leaving the task folder is refused here already (see :func:`resolve_inside`).
    """
    path = task_dir / relative
    if path.is_symlink() or path.exists():
        resolve_inside(path, task_dir)
    if not path.is_file():
        raise TaskFormatError(f"no {relative}{note}", location=str(task_dir), field=field)
    return path


def as_tags(value: Any) -> list[str]:
    """A tags value of task.yaml / task.toml as a list of strings (a lone value is one tag)."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        return [str(value)]
    return [str(tag) for tag in value]


def mapping_at(data: dict[str, Any], key: str, location: str, field: str | None = None) -> dict[str, Any]:
    """``data[key]`` as a new dict (``{}`` when absent); any other type is a TaskFormatError naming ``field``."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TaskFormatError(f"{field or key!r} must be a mapping, not {type(value).__name__}", location=location,
                              field=field or key)
    return dict(value)


def task_from_dir_parts(
    task_dir: Path,
    *,
    instruction: str,
    native: dict[str, Any],
    extra: dict[str, Any] | None,
    dockerfile: str,
    files: dict[str, FileContent],
    test_source: str,
    test_support_files: dict[str, FileContent],
    test_weights: dict[str, float],
    solution: str | None,
    limits: dict[str, Any],
    metadata: dict[str, Any],
) -> Task:
    """The Task of a directory (its name is the id) from the parts its reader found.

    ``native`` is the format's own table holding ``difficulty``, ``category`` and ``tags``;
    ``extra`` our table (``title``, ``use_case_category``), or None for a task written elsewhere.
    Raises :class:`TaskFormatError` naming the directory and the offending field.
    """
    fields = {
        "task_id": task_dir.name,
        "instruction": instruction,
        "title": (extra or {}).get("title", ""),
        "difficulty": str(native.get("difficulty") or "medium"),
        "category": str(native.get("category") or ""),
        "use_case_category": (extra or {}).get("use_case_category", ""),
        "tags": as_tags(native.get("tags")),
        "dockerfile": dockerfile,
        "files": files,
        "test_source": test_source,
        "test_support_files": test_support_files,
        "test_weights": test_weights,
        "solution": solution,
        "limits": limits,
        "metadata": metadata,
    }
    return task_from_fields(fields, str(task_dir))
