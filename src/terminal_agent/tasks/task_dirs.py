"""What the terminal-bench and Harbor directory formats share: text files in and out, the fresh
task directory, required files, and the Task built from the parts a directory reader found."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.model import Task, task_from_fields


# --- writing -----------------------------------------------------------------------------------
def write_text_file(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` as UTF-8 with line endings kept, creating parent directories; ``mode`` if given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    if mode is not None:
        path.chmod(mode)


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write every relative path -> text of ``files`` under ``root`` (the inverse of :func:`read_tree`)."""
    for relative, content in files.items():
        write_text_file(root / relative, content)


def fresh_task_dir(parent_dir: str | Path, task_id: str) -> Path:
    """``parent_dir/<task_id>``, created empty (an existing directory of that name is removed first)."""
    task_dir = Path(parent_dir) / task_id
    if task_dir.exists():
        shutil.rmtree(task_dir)
    task_dir.mkdir(parents=True)
    return task_dir


# --- reading -----------------------------------------------------------------------------------
def read_text_file(path: Path, task_dir: Path) -> str:
    """``path`` decoded as UTF-8; a binary file raises TaskFormatError naming it."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise TaskFormatError(
            f"{path.relative_to(task_dir)} is not UTF-8 text (binary files are not supported)",
            location=str(task_dir),
            field="files",
        ) from None


def read_tree(root: Path, task_dir: Path, skip: set[str] | None = None) -> dict[str, str]:
    """Every file under ``root`` as relative path -> text, skipping top-level names in ``skip``."""
    files: dict[str, str] = {}
    if not root.is_dir():
        return files
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if skip and relative.parts[0] in skip:
            continue
        if any(part == "__pycache__" for part in relative.parts) or path.suffix == ".pyc":
            continue
        if path.is_file():
            files[relative.as_posix()] = read_text_file(path, task_dir)
    return files


def require_file(task_dir: Path, relative: str, field: str, note: str = "") -> Path:
    """``task_dir/relative``; when it is not a file, a TaskFormatError ``no <relative><note>`` naming ``field``."""
    path = task_dir / relative
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
    files: dict[str, str],
    test_source: str,
    test_support_files: dict[str, str],
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
