"""Images without a daemon: export Docker images as a compressed base root filesystem plus small per-task layers.

``terminal-agent images export TASK... -o DIR`` (where Docker exists) writes::

    DIR/manifest.json              what is where (format, bases, images by tag, tasks by id)
    DIR/base-<id>.tar.gz           the base image's root filesystem, once (``docker export``)
    DIR/layers/<diff id>.tar.gz    each layer a task image adds over the base (from ``docker save``;
                                   whiteouts as ``.wh.`` entries), shared by every task that has it

The manifest records each archive's size (``files``), so that a copy cut short is caught when an image is
opened, before anything is unpacked; an archive of an older export without sizes is caught when it does not
unpack (``bwrap/layers.py``). Either, a manifest that is not whole, or a task changed since its export, is one
:class:`~terminal_agent.errors.ImageExportError` naming the file and the entry.

The bwrap backend (``sandbox.bwrap``) stacks the base and a task's layers as overlay lower dirs.
Copy DIR to a node without Docker and point ``sandbox.bwrap.images_dir`` (or
``TERMINAL_AGENT_IMAGES_DIR``) at it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from terminal_agent.errors import ImageError, ImageExportError, ImageNotAvailableError
from terminal_agent.tasks.model import Task, encode_file_map

logger = logging.getLogger(__name__)

EXPORT_FORMAT = "terminal-agent-export-v1"
MANIFEST_NAME = "manifest.json"
IMAGES_DIR_ENV = "TERMINAL_AGENT_IMAGES_DIR"
_COPY_CHUNK = 1 << 20
HOW_TO_EXPORT = (
    "on a machine with Docker run `terminal-agent images export TASKS -o DIR`, copy DIR to this node "
    f"and set sandbox.bwrap.images_dir (or {IMAGES_DIR_ENV}) to it"
)


def task_source_hash(task: Task) -> str:
    """Hash of what a task's image is made from (its Dockerfile, files and ``docker_image``), to spot a stale
    export. Binary files enter as ``{"base64": ...}`` and ``docker_image`` only when set, so a text-only task
    without one hashes as before (its export stays valid)."""
    fields: dict[str, Any] = {"dockerfile": task.dockerfile, "files": sorted(encode_file_map(task.files).items())}
    if task.docker_image is not None:
        fields["docker_image"] = task.docker_image
    payload = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


# --- reading an export (no Docker needed) ---------------------------------------------------------
@dataclass(frozen=True)
class ExportedImage:
    """One image of an export: its layers (base first) and the config a sandbox of it needs."""

    ref: str
    base_archive: Path
    layer_archives: list[Path]
    """The task's own layers, bottom first."""
    env: list[str] = field(default_factory=list)
    """``KEY=value`` entries of the image's environment."""
    workdir: str = "/"
    user: str = ""


class ExportedImages:
    """An export directory written by :func:`export_images`."""

    def __init__(self, root: Path, manifest: dict[str, Any]):
        self.root = root
        self.manifest = manifest

    @classmethod
    def open(cls, images_dir: str | os.PathLike[str] | None = None) -> "ExportedImages":
        """The export at ``images_dir`` (else ``$TERMINAL_AGENT_IMAGES_DIR``); ``ImageNotAvailableError`` saying
        how to make one when there is none."""
        where = images_dir or os.environ.get(IMAGES_DIR_ENV)
        if not where:
            raise ImageNotAvailableError(f"the bwrap backend needs exported images and none is configured: {HOW_TO_EXPORT}")
        root = Path(where)
        if not (root / MANIFEST_NAME).is_file():
            raise ImageNotAvailableError(f"no image export at {root} ({MANIFEST_NAME} is missing): {HOW_TO_EXPORT}")
        return cls(root, read_manifest(root / MANIFEST_NAME))

    def image_for_task(self, task: Task) -> str:
        """The exported image ref of ``task``; an error when the task was not exported or changed since."""
        entry = (self.manifest.get("tasks") or {}).get(task.task_id)
        if entry is None:
            raise ImageNotAvailableError(f"task {task.task_id!r} is not in the image export at {self.root}: {HOW_TO_EXPORT}")
        field = f"tasks[{task.task_id!r}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("image"), str):
            raise ImageExportError(f"is not an object with an 'image' string; {HOW_TO_EXPORT}",
                                   path=str(self.root / MANIFEST_NAME), field=field)
        if entry.get("source_hash") != task_source_hash(task):
            raise ImageExportError(
                f"the export of task {task.task_id!r} is stale: its Dockerfile or files changed since it was exported "
                f"(exported {entry.get('source_hash')!r}, now {task_source_hash(task)!r}); {HOW_TO_EXPORT}",
                path=str(self.root / MANIFEST_NAME), field=f"{field}.source_hash",
            )
        return str(entry["image"])

    def image(self, ref: str) -> ExportedImage:
        entry = (self.manifest.get("images") or {}).get(ref)
        if entry is None:
            known = ", ".join(sorted(self.manifest.get("images") or {})[:8]) or "none"
            raise ImageNotAvailableError(f"image {ref!r} is not in the export at {self.root} (it has: {known}): {HOW_TO_EXPORT}")
        manifest_path = str(self.root / MANIFEST_NAME)
        field = f"images[{ref!r}]"
        layers = entry.get("layers", []) if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
            raise ImageExportError(f"is not an object with a 'layers' list of file names; {HOW_TO_EXPORT}",
                                   path=manifest_path, field=field)
        base = (self.manifest.get("bases") or {}).get(entry.get("base"))
        if not isinstance(base, dict) or not isinstance(base.get("file"), str):
            raise ImageExportError(f"names a base that is not exported ({entry.get('base')!r}); {HOW_TO_EXPORT}",
                                   path=manifest_path, field=f"{field}.base")
        names = [base["file"], *layers]
        for name in names:
            self._check_archive(name)
        archives = [self.root / name for name in names]
        config = entry.get("config") or {}
        return ExportedImage(
            ref=ref,
            base_archive=archives[0],
            layer_archives=archives[1:],
            env=list(config.get("Env") or []),
            workdir=config.get("WorkingDir") or "/",
            user=config.get("User") or "",
        )


    def _check_archive(self, name: str) -> None:
        """``name`` (relative to the export) is a file inside it of the size the manifest recorded."""
        path = self.root / name
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ImageExportError(f"names {name!r}, which is not a file inside the export; {HOW_TO_EXPORT}",
                                   path=str(self.root / MANIFEST_NAME), field=f"files[{name!r}]")
        if not path.is_file():
            raise ImageExportError(f"is missing from the export; {HOW_TO_EXPORT}", path=str(path))
        recorded = (self.manifest.get("files") or {}).get(name)
        if recorded is None:
            return  # an export of an older version: a cut archive shows when it is unpacked
        size = path.stat().st_size
        if size < recorded:
            raise ImageExportError(f"is truncated: {size:,} of the {recorded:,} bytes the manifest records "
                                   f"(a copy cut short?); {HOW_TO_EXPORT}", path=str(path))
        if size != recorded:
            raise ImageExportError(f"is {size:,} bytes, not the {recorded:,} the manifest records: it was replaced "
                                   f"after the export (stale); {HOW_TO_EXPORT}", path=str(path))


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest at ``path``; :class:`ImageExportError` naming it and what is wrong when it is not whole."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImageExportError(f"is not UTF-8 text (byte {exc.start}); {HOW_TO_EXPORT}", path=str(path)) from None
    except OSError as exc:
        raise ImageExportError(f"cannot be read ({exc.strerror or exc}); {HOW_TO_EXPORT}", path=str(path)) from None
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        stripped = text.rstrip()
        cut = not stripped or not stripped.endswith("}") or exc.pos >= len(stripped)  # an object that never closes
        where = f"line {exc.lineno} column {exc.colno}: {exc.msg}"
        what = f"ends early: it was cut short (JSON stops at {where})" if cut else f"is not valid JSON at {where}"
        raise ImageExportError(f"{what}; {HOW_TO_EXPORT}", path=str(path)) from None
    except RecursionError:
        raise ImageExportError(f"is nested too deeply to be a manifest; {HOW_TO_EXPORT}", path=str(path)) from None
    if not isinstance(manifest, dict):
        raise ImageExportError(f"is a JSON {type(manifest).__name__}, not an object; {HOW_TO_EXPORT}", path=str(path))
    if manifest.get("format") != EXPORT_FORMAT:
        raise ImageExportError(f"is {manifest.get('format')!r}, not {EXPORT_FORMAT!r}; {HOW_TO_EXPORT}",
                               path=str(path), field="format")
    for key in ("bases", "images", "tasks", "files"):
        if not isinstance(manifest.get(key, {}), dict):
            raise ImageExportError(f"is not an object; {HOW_TO_EXPORT}", path=str(path), field=key)
    return manifest


# --- writing an export (needs Docker) -------------------------------------------------------------
@dataclass
class ExportReport:
    """What one export run did."""

    root: Path
    base_file: str = ""
    base_written: bool = False
    images: dict[str, str] = field(default_factory=dict)
    """task id -> image tag."""
    layers_written: int = 0
    bytes_written: int = 0


def _write_gzip(chunks: Iterable[bytes], target: Path) -> int:
    temp = target.with_name(target.name + f".tmp{os.getpid()}")
    with open(temp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=3, mtime=0) as out:
        for chunk in chunks:
            out.write(chunk)
    os.replace(temp, target)
    return target.stat().st_size


def _image_layers(api: Any, ref: str) -> tuple[str, list[str], dict[str, Any]]:
    info = api.inspect_image(ref)
    return info["Id"], list((info.get("RootFS") or {}).get("Layers") or []), info.get("Config") or {}


def _export_base(api: Any, base_ref: str, root: Path, report: ExportReport) -> tuple[str, list[str], dict[str, Any]]:
    base_id, layers, config = _image_layers(api, base_ref)
    name = f"base-{base_id.split(':')[-1][:16]}.tar.gz"
    report.base_file = name
    if not (root / name).is_file():
        container = api.create_container(base_ref, command=["true"], entrypoint=[], network_disabled=True)["Id"]
        try:
            report.bytes_written += _write_gzip(api.export(container, chunk_size=_COPY_CHUNK), root / name)
        finally:
            api.remove_container(container, force=True)
        report.base_written = True
    return base_id, layers, config


def _save_layers(api: Any, ref: str, wanted: set[str], root: Path, report: ExportReport) -> None:
    """Write every layer of ``ref`` whose diff id is in ``wanted`` (and not written yet) from ``docker save``."""
    missing = {d for d in wanted if not (root / _layer_file(d)).is_file()}
    if not missing:
        return
    with tempfile.TemporaryDirectory(prefix="ta-export-") as scratch:
        saved = Path(scratch) / "image.tar"
        with open(saved, "wb") as handle:
            for chunk in api.get_image(ref, chunk_size=_COPY_CHUNK):
                handle.write(chunk)
        with tarfile.open(saved) as image_tar:
            manifest = json.load(image_tar.extractfile("manifest.json"))  # type: ignore[arg-type]
            config = json.load(image_tar.extractfile(manifest[0]["Config"]))  # type: ignore[arg-type]
            for diff_id, member in zip(config["rootfs"]["diff_ids"], manifest[0]["Layers"]):
                if diff_id not in missing:
                    continue
                source = image_tar.extractfile(member)
                if source is None:
                    raise ImageError(f"docker save of {ref} has no readable layer {member}")
                report.bytes_written += _write_gzip(iter(lambda: source.read(_COPY_CHUNK), b""), root / _layer_file(diff_id))
                report.layers_written += 1
                missing.discard(diff_id)
    if missing:
        raise ImageError(f"docker save of {ref} lacks layers {sorted(missing)}")


def _layer_file(diff_id: str) -> str:
    return f"layers/{diff_id.split(':')[-1][:32]}.tar.gz"


def export_images(
    tasks: list[Task],
    out_dir: str | os.PathLike[str],
    *,
    base_image: str | None = None,
    manager: Any = None,
    progress: Callable[[str], None] | None = None,
) -> ExportReport:
    """Build (or find) each task's image and write the export to ``out_dir`` (merged into an existing one).

    Raises :class:`ImageError` when an image cannot be built, or is not built on the base image, and
    :class:`ImageExportError` (before any Docker work) when an export at ``out_dir`` is there but not whole.
    """
    from terminal_agent.sandbox.images.manager import ImageManager

    root = Path(out_dir)
    path = root / MANIFEST_NAME
    manifest: dict[str, Any] = {"format": EXPORT_FORMAT, "bases": {}, "images": {}, "tasks": {}, "files": {}}
    if path.is_file():  # extended; a broken one is an error naming it, never silently replaced
        try:
            manifest = {**manifest, **read_manifest(path)}
        except ImageExportError as exc:
            if exc.field != "format":
                raise ImageExportError(f"{exc.reason.split('; ')[0]}, so the export cannot be extended: remove {root} "
                                       "or export to a new directory", path=exc.path, field=exc.field) from None
            # another format (an older version's export): started afresh, as before
    manager = manager or ImageManager()
    base_ref = base_image or manager.base_image
    (root / "layers").mkdir(parents=True, exist_ok=True)
    report = ExportReport(root)
    api = manager.client.api
    manager.ensure_base_image()
    base_id, base_layers, base_config = _export_base(api, base_ref, root, report)
    manifest["bases"][base_id] = {"file": report.base_file, "image": base_ref, "layers": base_layers}
    manifest["images"][base_ref] = {"base": base_id, "layers": [], "config": _config(base_config)}
    manifest["files"][report.base_file] = (root / report.base_file).stat().st_size
    for task in tasks:
        if progress:
            progress(f"{task.task_id}: image")
        tag = manager.ensure_task_image(task)
        _, layers, config = _image_layers(api, tag)
        if layers[: len(base_layers)] != base_layers:
            raise ImageError(f"task {task.task_id!r}: image {tag} is not built on {base_ref}; only images FROM it can be exported")
        extra = layers[len(base_layers):]
        if progress:
            progress(f"{task.task_id}: {len(extra)} layer(s)")
        _save_layers(api, tag, set(extra), root, report)
        manifest["images"][tag] = {"base": base_id, "layers": [_layer_file(d) for d in extra], "config": _config(config)}
        for name in manifest["images"][tag]["layers"]:
            manifest["files"][name] = (root / name).stat().st_size
        manifest["tasks"][task.task_id] = {"image": tag, "source_hash": task_source_hash(task)}
        report.images[task.task_id] = tag
    temp = path.with_name(path.name + f".tmp{os.getpid()}")
    temp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.replace(temp, path)
    return report


def _config(config: dict[str, Any]) -> dict[str, Any]:
    return {"Env": list(config.get("Env") or []), "WorkingDir": config.get("WorkingDir") or "/", "User": config.get("User") or ""}


def remove_export(out_dir: str | os.PathLike[str]) -> None:
    """Delete an export directory (tests and the CLI's ``--replace``)."""
    shutil.rmtree(out_dir, ignore_errors=True)
