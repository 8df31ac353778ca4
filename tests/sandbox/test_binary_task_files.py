"""Binary task files end to end on Docker and bwrap: the environment's files (NUL bytes, invalid UTF-8, gzip)
are in the sandbox byte for byte, and so is what upload_dir and write_file carry."""

from __future__ import annotations

import gzip
import hashlib
import os

import pytest

from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import Task, TaskLimits

pytestmark = pytest.mark.docker  # the bwrap case exports its image from the local daemon first

FILES: dict[str, str | bytes] = {
    "fixtures/nul.bin": b"\x00head\x00\x00tail\x00",
    "fixtures/not-utf8.dat": bytes(range(256)),
    "fixtures/table.csv.gz": gzip.compress(b"a,b\n1,2\n" * 50, mtime=0),
    "fixtures/readme.txt": "text stays text: caf\u00e9\r\n",
    "tool.sh": b"#!/bin/sh\necho \xff-ran\n",  # a binary script keeps its executable bit
}
TASK = Task(
    task_id="binary-task-files",
    instruction="unused",
    dockerfile="FROM terminal-agent/base:bookworm\nCOPY fixtures/ /srv/fixtures/\nCOPY tool.sh /usr/local/bin/tool.sh\n",
    files=FILES,
    test_source="def test_x():\n    pass\n",
    test_weights={"test_x": 1.0},
)


def sha256(content: str | bytes) -> str:
    return hashlib.sha256(content if isinstance(content, bytes) else content.encode("utf-8")).hexdigest()


def sums_in(sandbox, directory: str) -> dict[str, str]:
    listing = sandbox.exec(f"cd {directory} && find . -type f -exec sha256sum {{}} + | sort -k2", 20).output
    return {path.removeprefix("./"): digest for digest, path in (line.split(maxsplit=1) for line in listing.splitlines())}


@pytest.fixture(params=["docker", "bwrap"])
def config(request) -> SandboxConfig:
    if request.param == "bwrap":
        from bwrap_support import bwrap_config

        return bwrap_config([TASK])
    return SandboxConfig()


def test_environment_files_arrive_byte_identical(config):
    image = resolve_task_image(config, TASK)
    with start_sandbox(config, image, TaskLimits(), run_id="test-binary-files") as sandbox:
        expected = {path.removeprefix("fixtures/"): sha256(content) for path, content in FILES.items()
                    if path.startswith("fixtures/")}
        assert sums_in(sandbox, "/srv/fixtures") == expected
        assert sandbox.read_file("/srv/fixtures/nul.bin") == FILES["fixtures/nul.bin"]
        assert sandbox.exec("zcat /srv/fixtures/table.csv.gz | head -1", 10).output == "a,b\n"
        assert sandbox.exec("tool.sh", 10).output == "\ufffd-ran\n"


def test_uploads_and_writes_of_any_bytes_are_lossless(config, tmp_path):
    for path, content in FILES.items():
        local = tmp_path / "tree" / path
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    os.chmod(tmp_path / "tree" / "tool.sh", 0o755)
    blob = os.urandom(300_000) + b"\x00" * 1000  # larger than one pipe buffer, any bytes
    with start_sandbox(config, "terminal-agent/base:bookworm", TaskLimits(), run_id="test-binary-files") as sandbox:
        sandbox.upload_dir(tmp_path / "tree", "/opt/uploaded")
        assert sums_in(sandbox, "/opt/uploaded") == {path: sha256(content) for path, content in FILES.items()}
        sandbox.write_file("/opt/blob.bin", blob)
        assert sandbox.exec("sha256sum /opt/blob.bin", 10).output.split()[0] == hashlib.sha256(blob).hexdigest()
        assert sandbox.read_file("/opt/blob.bin") == blob
