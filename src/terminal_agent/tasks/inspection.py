"""``terminal-agent tasks inspect``: what a task source says, before anything is built.

For each Harbor task: every task.toml setting with what it became (mapped onto a Task field, Harbor's default
applied, kept but unused, refused with the key), plus a summary of the Task. A terminal-bench v1 task built from
its docker-compose.yaml lists that file's settings the same way (``tasks/terminal_bench/compose.py``); other
formats (CSV, parquet) get the summary only: their readers have no settings that can be refused one by one.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from terminal_agent.errors import UNTRUSTED_CONTENT_ERRORS, TaskFormatError
from terminal_agent.tasks.harbor.format import is_harbor_task_dir, read_harbor_dir
from terminal_agent.tasks.harbor.task_toml import HarborSetting, SettingStatus
from terminal_agent.tasks.model import Task
from terminal_agent.tasks.terminal_bench.compose import COMPOSE_METADATA_KEY
from terminal_agent.tasks.terminal_bench.test_requirements import TEST_REQUIREMENTS_METADATA_KEY


@dataclass
class TaskInspection:
    """What one task of a source was read as."""

    location: str
    """The task folder, or the file (and row) it came from."""
    format: str
    """The format it was read in (``harbor``, ``tb``, ``csv``, ``parquet``)."""
    task_id: str | None = None
    """The task's id, when it could be read."""
    settings: list[HarborSetting] = field(default_factory=list)
    """Harbor tasks: every task.toml setting and what it became."""
    summary: dict[str, Any] = field(default_factory=dict)
    """The Task as read: grading mode, limits, image, file counts."""
    error: str | None = None
    """Why the task cannot be used (the first refusal, a missing file ...)."""
    error_field: str | None = None
    """The key or field the error names."""
    written_here: bool = False
    """Whether terminal-agent wrote the folder (its ``[metadata.terminal_agent]`` table is the source of truth)."""

    def of(self, status: SettingStatus) -> list[HarborSetting]:
        """The settings of one status."""
        return [setting for setting in self.settings if setting.status is status]

    @property
    def ok(self) -> bool:
        """Whether the task can be used."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``--json``)."""
        grouped: dict[str, list[dict[str, Any]]] = {status.value: [] for status in SettingStatus}
        for setting in self.settings:
            entry = {"key": setting.key, "value": setting.value, "field": setting.field,
                     "task_value": setting.task_value, "note": setting.note}
            grouped[setting.status.value].append(entry)
        return {
            "location": self.location, "format": self.format, "task_id": self.task_id, "ok": self.ok,
            "error": self.error, "error_field": self.error_field, "written_by_terminal_agent": self.written_here,
            "summary": self.summary, **grouped,
        }


@dataclass
class InspectionReport:
    """Every task of a source."""

    source: str
    """The path inspected."""
    tasks: list[TaskInspection] = field(default_factory=list)
    """One entry per task (or per bad row / folder)."""

    @property
    def ok(self) -> bool:
        """Whether every task can be used (nothing refused, nothing unreadable)."""
        return all(task.ok for task in self.tasks)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``--json``)."""
        return {"source": self.source, "ok": self.ok, "tasks": [task.to_dict() for task in self.tasks]}


def task_summary(task: Task) -> dict[str, Any]:
    """The facts of a Task that decide how it runs."""
    def counts(files: dict[str, Any]) -> dict[str, int]:
        return {"files": len(files), "binary": sum(isinstance(content, bytes) for content in files.values())}

    return {
        "grading": task.verifier.mode,
        "limits": task.limits.model_dump(),
        "docker_image": task.docker_image,
        "env": dict(task.env),
        "verifier": task.verifier.model_dump(mode="json", exclude={"mode"}),
        "tests": len(task.test_functions),
        "test_weights": dict(task.test_weights),
        "environment_files": counts(task.files),
        "test_files": counts(task.test_support_files),
        "solution": task.solution is not None,
        "solution_files": counts(task.solution_files),
        "test_requirements": list(task.metadata.get(TEST_REQUIREMENTS_METADATA_KEY) or []),
        "images": image_mapping(task),
    }


def image_mapping(task: Task) -> list[dict[str, str | None]]:
    """Each public image the task names (its ``docker_image``, its Dockerfile's ``FROM`` images) with the local
    stand-in it gets where it is neither present nor pullable (None: no stand-in, the build would stop there) and
    what differs (which CPython stands in for which)."""
    from terminal_agent.sandbox.images.aliases import find_alias, find_from_images

    names = ([task.docker_image] if task.docker_image else []) + [e.image for e in find_from_images(task.dockerfile)]
    mapping: list[dict[str, str | None]] = []
    for name in dict.fromkeys(names):
        alias = find_alias(name)
        mapping.append({"image": name, "stand_in": alias.substitute if alias else None,
                        "note": alias.note if alias else "no local stand-in"})
    return mapping


def compose_settings(task: Task) -> list[HarborSetting]:
    """The settings of the docker-compose.yaml a terminal-bench v1 task was built from (none for other tasks)."""
    record = task.metadata.get(COMPOSE_METADATA_KEY)
    if not isinstance(record, dict):
        return []
    settings = []
    for entry in record.get("settings") or []:
        field_name = entry.get("field")
        value = None
        if isinstance(field_name, str) and field_name.startswith("env."):
            value = task.env.get(field_name[4:])
        elif field_name == "dockerfile":
            value = posixpath.normpath(f"{record.get('build_context')}/{record.get('dockerfile')}")
        settings.append(HarborSetting(f"{record.get('file')}:{entry.get('key')}", SettingStatus(entry.get("status")),
                                      entry.get("value"), field_name, value, entry.get("note", "")))
    return settings


def inspect_harbor_dir(task_dir: str | Path) -> TaskInspection:
    """The inspection of one Harbor folder (never raises for the task's own faults)."""
    try:
        result = read_harbor_dir(task_dir)
    except UNTRUSTED_CONTENT_ERRORS as exc:
        # the folder is untrusted: odd content that trips a reader is this folder's error, as when tasks load
        return TaskInspection(str(task_dir), "harbor", error=f"cannot read the task directory: {type(exc).__name__}: "
                              f"{exc}", error_field="task.toml")
    inspection = TaskInspection(str(result.task_dir), "harbor", written_here=result.ours)
    if result.config is not None:
        inspection.settings = list(result.config.settings)
    if result.task is not None:
        inspection.task_id = result.task.task_id
        inspection.summary = task_summary(result.task)
    if result.error is not None:
        inspection.error = result.error.reason
        inspection.error_field = result.error.field
    return inspection


def _inspect_other(path: Path) -> list[TaskInspection]:
    """A source of another format, through the format registry: summaries and errors."""
    from terminal_agent.tasks.loading import collect_tasks, detect_source_kind

    kind = detect_source_kind(path)
    tasks, errors = collect_tasks(path, workers=1)
    entries = [TaskInspection(str(path), kind, task.task_id, settings=compose_settings(task), summary=task_summary(task))
               for task in tasks]
    entries += [TaskInspection(error.location or str(path), kind, error=error.reason, error_field=error.field)
                for error in errors]
    return entries


def inspect_tasks(path: str | Path) -> InspectionReport:
    """Inspect ``path``: a Harbor folder, a folder of task folders (formats may be mixed), or any other source.

    Raises :class:`TaskFormatError` only for problems of the whole source (missing, not a task source).
    """
    path = Path(path)
    report = InspectionReport(str(path))
    if not path.exists():
        raise TaskFormatError("no such file or directory", location=str(path))
    if path.is_dir() and is_harbor_task_dir(path):
        report.tasks.append(inspect_harbor_dir(path))
        return report
    if path.is_dir() and not (path / "task.yaml").is_file():
        members = [child for child in sorted(path.iterdir()) if not child.name.startswith(".")]
        harbor = [child for child in members if child.is_dir() and not child.is_symlink() and is_harbor_task_dir(child)]
        if harbor:
            for child in members:
                if child.is_symlink() and child.is_dir():
                    report.tasks.append(TaskInspection(str(child), "collection", error=(
                        f"is a symlink to a directory ({child.resolve()}); refused: the task folders of a collection "
                        "must be real directories inside it"), error_field="files"))
                elif child in harbor:
                    report.tasks.append(inspect_harbor_dir(child))
                elif child.is_dir() and (child / "task.yaml").is_file():
                    report.tasks.extend(_inspect_other(child))
            return report
    report.tasks.extend(_inspect_other(path))
    return report
