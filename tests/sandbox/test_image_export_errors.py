"""Truncated, corrupt or stale image exports: one ImageExportError naming the file and the entry at fault.

The exports here are written by hand (a manifest and real .tar.gz archives), so no Docker is needed; the
unpacking runs the real ``tar`` of the bwrap backend.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from terminal_agent.cli import app
from terminal_agent.errors import ImageExportError, ImageNotAvailableError, exit_code_for
from terminal_agent.sandbox.bwrap.layers import unpacked_layer
from terminal_agent.sandbox.images.export import EXPORT_FORMAT, MANIFEST_NAME, ExportedImages, task_source_hash
from terminal_agent.tasks.csv.format import write_tasks_csv
from terminal_agent.tasks.model import Task

TASK = Task(
    task_id="exported",
    instruction="x",
    dockerfile="FROM terminal-agent/base:bookworm\nRUN echo hi > /hi\n",
    test_source="def test_x():\n    pass\n",
    test_weights={"test_x": 1.0},
)
IMAGE = "terminal-agent/task-exported:abc"
BASE_FILE = "base-0123.tar.gz"
LAYER_FILE = "layers/4567.tar.gz"


def _targz(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def write_export(root: Path, *, record_sizes: bool = True) -> Path:
    """A whole export of one task: a base archive, one layer, and a manifest (with archive sizes unless told)."""
    (root / "layers").mkdir(parents=True)
    (root / BASE_FILE).write_bytes(_targz({f"usr/share/f{i}": bytes(range(256)) * 64 for i in range(8)}))
    (root / LAYER_FILE).write_bytes(_targz({"hi": b"hi\n" * 5000}))
    manifest = {
        "format": EXPORT_FORMAT,
        "bases": {"sha256:0123": {"file": BASE_FILE, "image": "terminal-agent/base:bookworm", "layers": []}},
        "images": {IMAGE: {"base": "sha256:0123", "layers": [LAYER_FILE], "config": {"WorkingDir": "/app"}}},
        "tasks": {TASK.task_id: {"image": IMAGE, "source_hash": task_source_hash(TASK)}},
    }
    if record_sizes:
        manifest["files"] = {name: (root / name).stat().st_size for name in (BASE_FILE, LAYER_FILE)}
    (root / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1))
    return root


def test_a_whole_export_opens(tmp_path):
    exported = ExportedImages.open(write_export(tmp_path))
    image = exported.image(exported.image_for_task(TASK))
    assert image.workdir == "/app" and image.layer_archives == [tmp_path / LAYER_FILE]
    assert (unpacked_layer(image.layer_archives[0], tmp_path / "unpacked") / "hi").read_bytes() == b"hi\n" * 5000


def test_a_manifest_cut_short_names_the_file(tmp_path):
    manifest = write_export(tmp_path) / MANIFEST_NAME
    manifest.write_bytes(manifest.read_bytes()[:200])
    with pytest.raises(ImageExportError) as caught:
        ExportedImages.open(tmp_path)
    assert caught.value.path == str(manifest)
    assert str(caught.value).startswith(f"{manifest}: ends early: it was cut short (JSON stops at line ")
    assert "terminal-agent images export" in str(caught.value)
    assert exit_code_for(caught.value) == 2  # the user's input: a usage error at the CLI


def test_a_manifest_broken_in_the_middle_or_of_the_wrong_shape(tmp_path):
    manifest = write_export(tmp_path) / MANIFEST_NAME
    manifest.write_text(manifest.read_text().replace('"bases":', '"bases"', 1))
    with pytest.raises(ImageExportError, match=r"is not valid JSON at line 3 column"):
        ExportedImages.open(tmp_path)
    manifest.write_text(json.dumps({"format": EXPORT_FORMAT, "images": []}))
    with pytest.raises(ImageExportError) as caught:
        ExportedImages.open(tmp_path)
    assert caught.value.field == "images" and "[images] is not an object" in str(caught.value)
    manifest.write_bytes(b'{"format": "\xff"}')
    with pytest.raises(ImageExportError, match="is not UTF-8 text"):
        ExportedImages.open(tmp_path)


def test_a_truncated_archive_is_caught_before_anything_is_unpacked(tmp_path):
    write_export(tmp_path)
    layer = tmp_path / LAYER_FILE
    whole = layer.stat().st_size
    layer.write_bytes(layer.read_bytes()[: whole // 2])
    exported = ExportedImages.open(tmp_path)
    with pytest.raises(ImageExportError) as caught:
        exported.image(IMAGE)
    assert caught.value.path == str(layer)
    assert f"is truncated: {whole // 2:,} of the {whole:,} bytes the manifest records" in str(caught.value)
    assert isinstance(caught.value, ImageNotAvailableError)  # callers that catch "no image" still do


def test_an_archive_replaced_after_the_export_is_stale(tmp_path):
    write_export(tmp_path)
    (tmp_path / BASE_FILE).write_bytes(_targz({"other": os.urandom(100_000)}))  # bigger than the recorded one
    with pytest.raises(ImageExportError, match=r"it was replaced after the export \(stale\)") as caught:
        ExportedImages.open(tmp_path).image(IMAGE)
    assert caught.value.path == str(tmp_path / BASE_FILE)


def test_a_task_changed_since_its_export_names_the_entry(tmp_path):
    exported = ExportedImages.open(write_export(tmp_path))
    changed = TASK.model_copy(update={"dockerfile": TASK.dockerfile + "RUN true\n"})
    with pytest.raises(ImageExportError) as caught:
        exported.image_for_task(changed)
    assert caught.value.path == str(tmp_path / MANIFEST_NAME)
    assert caught.value.field == "tasks['exported'].source_hash"
    assert "is stale: its Dockerfile or files changed" in str(caught.value)


def test_an_older_export_without_sizes_is_caught_when_its_archive_does_not_unpack(tmp_path):
    write_export(tmp_path, record_sizes=False)
    layer = tmp_path / LAYER_FILE
    layer.write_bytes(layer.read_bytes()[:-40])  # the gzip trailer and the end of the stream are gone
    image = ExportedImages.open(tmp_path).image(IMAGE)  # no sizes recorded: nothing to compare yet
    with pytest.raises(ImageExportError) as caught:
        unpacked_layer(image.layer_archives[0], tmp_path / "unpacked")
    assert caught.value.path == str(layer)
    assert "is truncated" in str(caught.value) and "export again" in str(caught.value)
    assert not any((tmp_path / "unpacked").glob("*/root"))  # the half-unpacked layer is not kept


def test_images_export_refuses_to_extend_a_broken_export_naming_it(tmp_path):
    """`images export -o DIR` onto a cut manifest stops before any Docker work, naming the file."""
    manifest = write_export(tmp_path / "export") / MANIFEST_NAME
    manifest.write_bytes(manifest.read_bytes()[:100])
    tasks_csv = write_tasks_csv([TASK], tmp_path / "tasks.csv")
    result = CliRunner().invoke(app, ["images", "export", str(tasks_csv), "-o", str(tmp_path / "export")],
                                env={"COLUMNS": "400"})
    assert result.exit_code == 2  # bad input: the export named by -o
    assert str(manifest) in " ".join(result.output.split()) and "cannot be extended" in result.output
    assert manifest.read_bytes() == manifest.read_bytes()[:100]  # left as it was
