"""Images: apt-sources parsing and FROM rewriting (pure), then aliasing, caching, locking and
build failures against the real Docker daemon with tiny Dockerfiles."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import logging
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import pytest

from terminal_agent.errors import ImageBuildError, ImageError, ImageNotAvailableError
from terminal_agent.sandbox.images.aliases import (
    PYTHON_311_IMAGE,
    PYTHON_313_IMAGE,
    SUBSTITUTE_DEBOOTSTRAPS,
    SUBSTITUTE_DOCKERFILES,
    DebootstrapRecipe,
    alias_for,
    find_alias,
    find_from_images,
    rewrite_from_lines,
    split_image_reference,
)
from terminal_agent.sandbox.images.base_image import (
    BASE_IMAGE,
    BASE_IMAGE_CHANGES,
    BASE_PACKAGES,
    BASE_SUITE,
    find_debian_mirror,
    missing_debian_packages,
    read_apt_sources,
)
from terminal_agent.sandbox.images.export import task_source_hash
from terminal_agent.sandbox.images.image_build import content_hash as _content_hash
from terminal_agent.sandbox.images.manager import MANAGED_LABEL, TASK_LABEL, ImageManager, task_repository
from terminal_agent.tasks.model import Task, TaskLimits

RUN_ID = uuid.uuid4().hex[:8]
TEST_SOURCE = "def test_marker():\n    assert open('/x').read() == 'hi\\n'\n"


def make_task(name: str, dockerfile: str, files: dict[str, str | bytes] | None = None, **fields) -> Task:
    return Task(
        task_id=f"Img-{name}-{RUN_ID}",
        instruction="unused",
        dockerfile=dockerfile,
        files=files or {},
        **fields,
        test_source=TEST_SOURCE,
        test_weights={"test_marker": 1.0},
        solution="echo secret-solution > /solution-ran\n",
    )


# --- apt sources -----------------------------------------------------------------------------
def write_sources(root, files: dict[str, str]):
    for relative, text in files.items():
        path = root / "etc" / "apt" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_mirror_from_deb822_sources_skips_security_and_disabled(tmp_path):
    root = write_sources(
        tmp_path,
        {
            "sources.list.d/debian.sources": """\
                Types: deb deb-src
                # a comment
                URIs: http://mirror.example/debian-security
                Suites: bookworm-security
                Components: main

                Types: deb
                URIs: http://disabled.example/debian
                Suites: bookworm
                Components: main
                Enabled: no

                Types: deb
                URIs: http://mirror.example/debian/
                Suites: bookworm bookworm-updates
                Components: main contrib
                Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
                """,
            "sources.list.d/other.list.disabled": "deb http://ignored.example/debian bookworm main\n",
        },
    )
    sources = read_apt_sources(root)
    assert [s.uri for s in sources] == ["http://mirror.example/debian-security", "http://mirror.example/debian/"]
    assert find_debian_mirror("bookworm", root) == "http://mirror.example/debian"


def test_mirror_from_one_line_sources_with_options(tmp_path):
    root = write_sources(
        tmp_path,
        {
            "sources.list": """\
                # deb http://commented.example/debian bookworm main
                deb-src http://src.example/debian bookworm main
                deb [arch=amd64 signed-by=/k.gpg] http://one.example/debian bookworm-updates main
                deb [ arch=amd64 ] http://one.example/debian bookworm main  # trailing comment
                """,
            "sources.list.d/extra.list": "deb http://extra.example/debian bookworm main\n",
        },
    )
    assert [s.suites for s in read_apt_sources(root)] == [("bookworm-updates",), ("bookworm",), ("bookworm",)]
    assert find_debian_mirror("bookworm", root) == "http://one.example/debian"


def test_no_debian_mirror_names_the_files_read(tmp_path):
    root = write_sources(tmp_path, {"sources.list": "deb http://archive.example/ubuntu noble main\n"})
    with pytest.raises(ImageError) as raised:
        find_debian_mirror("bookworm", root)
    assert "sources.list" in str(raised.value) and "--mirror" in str(raised.value)


# --- aliases and FROM rewriting ----------------------------------------------------------------
@pytest.mark.parametrize(
    "reference, expected",
    [
        ("ubuntu:24.04", BASE_IMAGE),
        ("docker.io/library/ubuntu:22.04", BASE_IMAGE),
        ("debian:bookworm-slim", BASE_IMAGE),
        ("debian:bookworm-20240110", BASE_IMAGE),
        ("python:3.13-slim-bookworm", PYTHON_313_IMAGE),
        ("python:3.13-trixie", PYTHON_313_IMAGE),
        ("python:3.11", PYTHON_311_IMAGE),
        ("python:3.11-slim-bookworm", PYTHON_311_IMAGE),
        ("python:3.10-slim", PYTHON_311_IMAGE),
        ("python:3.12.4-slim@sha256:" + "0" * 64, PYTHON_313_IMAGE),
        ("python:3.14", PYTHON_313_IMAGE),
        ("ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624", BASE_IMAGE),
        ("ghcr.io/laude-institute/t-bench/python-3-13:latest", PYTHON_313_IMAGE),
        ("ghcr.io/laude-institute/t-bench/python-3-13", PYTHON_313_IMAGE),
        ("ubuntu:18.04", None),
        ("python:2.7", None),
        ("python:3.9-slim", None),
        ("python:3.13-alpine", None),
        ("nosuchregistry.invalid/foo:1", None),
    ],
)
def test_alias_table(reference, expected):
    assert alias_for(reference) == expected


def test_a_python_version_debian_does_not_package_says_which_stands_in():
    assert find_alias("python:3.13-slim").note == "python 3.13 -> CPython 3.13 of Debian trixie"
    assert find_alias("python:3.11").note == "python 3.11 -> CPython 3.11 of Debian bookworm"
    note = find_alias("python:3.12-slim").note
    assert note.startswith("python 3.12 -> CPython 3.13 of Debian trixie") and "no 3.12" in note
    assert "no 3.10" in find_alias("python:3.10").note and "3.11" in find_alias("python:3.10").note
    assert "asked for bookworm" in find_alias("python:3.13-slim-bookworm").note
    assert find_alias("ubuntu:24.04").note == ""


def test_each_python_stand_in_has_headers_pip_venv_and_python():
    for package in ("python3-dev", "python3-pip", "python3-venv", "python-is-python3"):
        assert package in SUBSTITUTE_DOCKERFILES[PYTHON_311_IMAGE]
        assert package in SUBSTITUTE_DEBOOTSTRAPS[PYTHON_313_IMAGE].packages
    assert SUBSTITUTE_DEBOOTSTRAPS[PYTHON_313_IMAGE].suite == "trixie"


def test_tasks_on_the_base_image_keep_their_content_hash():
    """The python stand-ins changed; the base (and so every task on ubuntu/debian images) did not: its recipe and
    the Dockerfile a task on it is hashed with are what they were, so its cached image and tag stay valid."""
    assert (BASE_SUITE, BASE_PACKAGES, BASE_IMAGE_CHANGES) == (
        "bookworm", ("python3", "bash", "coreutils", "procps", "ca-certificates"),
        ('CMD ["/bin/bash"]', "LABEL terminal-agent.managed=true",
         "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "ENV LANG=C.UTF-8"))
    for reference in ("ubuntu:24.04", "debian:bookworm-slim", "ghcr.io/laude-institute/t-bench/ubuntu-24-04:1"):
        rewritten = rewrite_from_lines(f"FROM {reference}\nRUN echo hi > /x\n", lambda image: alias_for(image) or image)
        assert rewritten == "FROM terminal-agent/base:bookworm\nRUN echo hi > /x\n"
    # the formula over that Dockerfile, as it was before the stand-ins per version
    assert _content_hash("FROM terminal-agent/base:bookworm\nRUN echo hi > /x\n", {"a.txt": "a\n"}, ["sha256:1"]) == (
        "9dbd4a2fb0083d0c050e1d6b2d0d2fe79a0b32f38fa4b6924d7068aa2554b09a")


def test_missing_debian_packages_are_read_from_debootstrap_and_apt_logs():
    assert missing_debian_packages("I: Retrieving Packages\nE: Couldn't find these debs: python3.12 python3.12-dev\n") == [
        "python3.12", "python3.12-dev"]
    assert missing_debian_packages("E: Unable to locate package python3.12-dev\nE: Unable to locate package x\n") == [
        "python3.12-dev", "x"]
    assert missing_debian_packages("E: Package 'python3-distutils' has no installation candidate\n") == ["python3-distutils"]
    assert missing_debian_packages("E: Sub-process returned an error code\n") == []


def test_a_release_the_machine_does_not_list_is_fetched_from_its_debian_archive(tmp_path):
    root = write_sources(tmp_path, {"sources.list.d/debian.sources": """\
        Types: deb
        URIs: http://mirror.example/debian
        Suites: bookworm bookworm-updates
        Components: main
        """, "sources.list.d/other.list": "deb https://other.example/apt nodistro main\n"})
    assert find_debian_mirror("trixie", root) == "http://mirror.example/debian"


@pytest.mark.parametrize(
    "reference, expected",
    [
        ("ubuntu", ("ubuntu", "latest")),
        ("ubuntu:24.04", ("ubuntu", "24.04")),
        ("localhost:5000/team/tool", ("localhost:5000/team/tool", "latest")),
        ("localhost:5000/team/tool:v1", ("localhost:5000/team/tool", "v1")),
        ("python@sha256:abc", ("python", "sha256:abc")),
    ],
)
def test_split_image_reference(reference, expected):
    assert split_image_reference(reference) == expected


def test_rewrite_keeps_flags_stages_and_skips_stage_names():
    dockerfile = (
        "ARG BASE=ubuntu:24.04\n"
        "FROM --platform=linux/amd64 ${BASE} AS Builder\n"
        "RUN echo hi > /x\n"
        "from builder\n"
        "FROM scratch AS empty\n"
        "FROM python:3.12-slim\r\n"
        "COPY --from=builder /x /x\n"
    )
    assert [entry.image for entry in find_from_images(dockerfile)] == ["ubuntu:24.04", "python:3.12-slim"]
    rewritten = rewrite_from_lines(dockerfile, lambda image: f"local/{image.replace(':', '-')}")
    assert rewritten.splitlines(keepends=True) == [
        "ARG BASE=ubuntu:24.04\n",
        "FROM --platform=linux/amd64 local/ubuntu-24.04 AS Builder\n",
        "RUN echo hi > /x\n",
        "from builder\n",
        "FROM scratch AS empty\n",
        "FROM local/python-3.12-slim\r\n",
        "COPY --from=builder /x /x\n",
    ]


def test_task_repository_fits_docker_grammar():
    assert task_repository("Fix-Git_Repo.v2") == "terminal-agent/task-fix-git_repo.v2"
    assert task_repository("a..b._c") == "terminal-agent/task-a-b-c"


# --- content hashes ----------------------------------------------------------------------------------
BINARY_FILES: dict[str, str | bytes] = {
    "data/nul.bin": b"\x00\x01\x02 NUL \x00\xff",
    "data/latin1.txt": "caf\xe9 cr\xe8me\n".encode("latin-1"),  # not valid UTF-8
    "data/archive.gz": gzip.compress(b"payload\n" * 100, mtime=0),
    "data/notes.txt": "plain text, \u00e9t\u00e9\r\nkept as written\n",
}


def test_a_text_only_task_hashes_as_before_binary_files_existed():
    """Existing image tags and bwrap exports stay valid: the text-only payloads are unchanged."""
    files = {"b.txt": "two\n", "a/run.sh": "#!/bin/sh\necho \u00e9\n"}
    old_payload = {"scheme": "terminal-agent-image-v1", "dockerfile": "FROM x\n", "files": sorted(files.items()),
                   "bases": ["sha256:1"]}
    assert _content_hash("FROM x\n", files, ["sha256:1"]) == hashlib.sha256(
        json.dumps(old_payload, sort_keys=True).encode()).hexdigest()
    task = make_task("hash", "FROM x\n", files)
    old_source = json.dumps({"dockerfile": task.dockerfile, "files": sorted(task.files.items())}, sort_keys=True)
    assert task_source_hash(task) == hashlib.sha256(old_source.encode()).hexdigest()[:24]


def test_binary_files_hash_by_their_bytes():
    one = _content_hash("FROM x\n", BINARY_FILES, [])
    assert one == _content_hash("FROM x\n", dict(BINARY_FILES), [])
    changed = dict(BINARY_FILES, **{"data/nul.bin": b"\x00\x01\x02 NUL \x00\xfe"})
    assert _content_hash("FROM x\n", changed, []) != one
    as_text = dict(BINARY_FILES, **{"data/notes.txt": BINARY_FILES["data/notes.txt"].encode()})
    assert _content_hash("FROM x\n", as_text, []) != one  # the same bytes as text or bytes are told apart
    task = make_task("hash-binary", "FROM x\n", BINARY_FILES)
    assert task_source_hash(task) != task_source_hash(make_task("hash-binary", "FROM x\n", changed))
    assert task_source_hash(task) != task_source_hash(task.model_copy(update={"docker_image": "example.org/env:1"}))


# --- against the real daemon -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def manager(docker_client, tmp_path_factory):
    manager = ImageManager(client=docker_client, cache_dir=tmp_path_factory.mktemp("image-cache"), pull_timeout_s=10)
    manager.ensure_base_image()
    yield manager
    for image in docker_client.images.list(filters={"label": TASK_LABEL}):
        if RUN_ID in image.labels.get(TASK_LABEL, ""):
            docker_client.images.remove(image.id, force=True)


def run_in(client, tag: str, command: str) -> str:
    output = client.containers.run(tag, ["bash", "-c", command], remove=True, labels={"terminal-agent.test": "images"})
    return output.decode()


@pytest.mark.docker
def test_public_image_is_substituted_and_reported(manager, docker_client, caplog):
    task = make_task("alias", "FROM ubuntu:24.04 AS first\nRUN echo hi > /x\nFROM first\nRUN cat /x > /y\n")
    with caplog.at_level(logging.WARNING, logger="terminal_agent.sandbox.images.manager"):
        tag = manager.ensure_task_image(task)
    assert ("ubuntu:24.04", BASE_IMAGE) in manager.stats.substitutions
    assert any("ubuntu:24.04" in r.getMessage() and BASE_IMAGE in r.getMessage() for r in caplog.records)
    image = docker_client.images.get(tag)
    assert tag.startswith(f"terminal-agent/task-img-alias-{RUN_ID}:") and len(tag.rsplit(":", 1)[1]) == 12
    assert image.labels[MANAGED_LABEL] == "true" and image.labels[TASK_LABEL] == task.task_id
    assert run_in(docker_client, tag, "cat /y; python3 -c 'print(2 + 2)'") == "hi\n4\n"


@pytest.mark.docker
def test_aliases_follow_the_managers_own_base_image(docker_client, tmp_path):
    alternative = f"terminal-agent/base:alt-{RUN_ID}"
    docker_client.images.get(BASE_IMAGE).tag(alternative)
    try:
        manager = ImageManager(client=docker_client, base_image=alternative, cache_dir=tmp_path)
        assert manager.resolve_image("debian:bookworm-slim") == (alternative, docker_client.images.get(BASE_IMAGE).id)
        assert manager.stats.substitutions == [("debian:bookworm-slim", alternative)]
    finally:
        docker_client.images.remove(alternative)


@pytest.mark.docker
def test_unknown_image_fails_fast_naming_it(manager):
    builds = manager.build_count
    started = time.monotonic()
    with pytest.raises(ImageNotAvailableError) as raised:
        manager.ensure_task_image(make_task("unknown", "FROM nosuchregistry.invalid/foo:1\nRUN true\n"))
    assert time.monotonic() - started < manager.pull_timeout_s + 2
    assert "nosuchregistry.invalid/foo:1" in str(raised.value)
    assert "docker build" in str(raised.value) and "alias" in str(raised.value)
    assert manager.build_count == builds


@pytest.mark.docker
def test_registry_that_never_answers_fails_within_pull_timeout(docker_client, tmp_path):
    """A registry that accepts the connection and then says nothing must not stall resolution."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted = []

    def accept_and_stay_silent():
        with contextlib.suppress(OSError):  # the socket is closed at the end of the test
            while True:
                accepted.append(server.accept())

    threading.Thread(target=accept_and_stay_silent, daemon=True).start()
    reference = f"127.0.0.1:{server.getsockname()[1]}/silent:1"
    manager = ImageManager(client=docker_client, cache_dir=tmp_path, pull_timeout_s=2)
    try:
        started = time.monotonic()
        with pytest.raises(ImageNotAvailableError, match="silent:1"):
            manager.resolve_image(reference)
        assert 1.9 < time.monotonic() - started < 5
        started = time.monotonic()  # the failure is remembered: no second wait
        with pytest.raises(ImageNotAvailableError):
            manager.resolve_image(reference)
        assert time.monotonic() - started < 0.5 and manager.stats.pulls_failed == 1
    finally:
        server.close()


@pytest.mark.docker
def test_task_image_is_cached_and_context_holds_only_task_files(manager, docker_client):
    dockerfile = "FROM debian:bookworm\nCOPY . /ctx/\nRUN echo hi > /x\n"
    task = make_task("cache", dockerfile, {"data/input.txt": "one\n", "run.sh": "echo ran\n"})
    builds = manager.build_count
    tag = manager.ensure_task_image(task)
    hits = manager.stats.cache_hits
    assert manager.ensure_task_image(task) == tag
    assert manager.build_count == builds + 1 and manager.stats.cache_hits == hits + 1
    listing = run_in(docker_client, tag, "cd /ctx && find . -type f | sort && ./run.sh && cat data/input.txt")
    # the tests and the solution never enter the image
    assert listing.split() == ["./Dockerfile", "./data/input.txt", "./run.sh", "ran", "one"]

    changed = make_task("cache", dockerfile, {"data/input.txt": "two\n", "run.sh": "echo ran\n"})
    changed_tag = manager.ensure_task_image(changed)
    assert changed_tag != tag and changed_tag.rsplit(":", 1)[0] == tag.rsplit(":", 1)[0]
    assert manager.build_count == builds + 2


@pytest.mark.docker
def test_concurrent_requests_build_once(manager):
    task = make_task("threads", "FROM debian:bookworm\nRUN echo hi > /x && sleep 1\n")
    builds, hits = manager.build_count, manager.stats.cache_hits
    barrier = threading.Barrier(12)
    tags: list[str] = []
    errors: list[BaseException] = []

    def request():
        barrier.wait()
        try:
            tags.append(manager.ensure_task_image(task))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=request) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    assert len(tags) == 12 and len(set(tags)) == 1
    assert manager.build_count == builds + 1
    assert manager.stats.cache_hits == hits + 11


@pytest.mark.docker
def test_concurrent_processes_build_once(manager, tmp_path):
    """Two processes with their own managers share the cache dir's file lock: one builds, one hits."""
    task = make_task("procs", "FROM debian:bookworm\nRUN echo hi > /x && sleep 3\n")
    (tmp_path / "task.json").write_text(task.model_dump_json())
    script = textwrap.dedent(
        f"""
        import pathlib, sys
        from terminal_agent.sandbox.images.manager import ImageManager
        from terminal_agent.tasks.model import Task
        task = Task.model_validate_json(pathlib.Path(sys.argv[1]).read_text())
        manager = ImageManager(cache_dir={str(manager.cache_dir)!r})
        tag = manager.ensure_task_image(task)
        print(tag, manager.build_count, manager.stats.cache_hits)
        """
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "task.json")], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=120)[0].split() for process in processes]
    assert all(process.returncode == 0 for process in processes)
    assert outputs[0][0] == outputs[1][0]
    assert sorted(int(out[1]) for out in outputs) == [0, 1]
    assert sorted(int(out[2]) for out in outputs) == [0, 1]


@pytest.mark.docker
def test_build_failure_carries_log_tail(manager, docker_client):
    task = make_task("broken", "FROM debian:bookworm\nRUN echo marker-before-failure && exit 3\n")
    lines: list[str] = []
    with pytest.raises(ImageBuildError) as raised:
        manager.ensure_task_image(task, progress=lines.append)
    error = raised.value
    assert task.task_id in str(error)
    assert "marker-before-failure" in error.log_tail and "marker-before-failure" in lines
    assert "returned a non-zero code: 3" in error.log_tail
    assert len(error.log_tail.splitlines()) <= 40
    assert not docker_client.images.list(filters={"label": f"{TASK_LABEL}={task.task_id}"})


@pytest.mark.docker
def test_python_image_substitute_has_python_and_pip(manager, docker_client):
    task = make_task("python", "FROM python:3.12-slim\nRUN pip --version > /pip && python -c 'print(1)' > /x\n")
    lines: list[str] = []
    tag = manager.ensure_task_image(task, progress=lines.append)
    assert ("python:3.12-slim", PYTHON_313_IMAGE) in manager.stats.substitutions
    assert run_in(docker_client, tag, "cat /x /pip").startswith("1\npip ")
    # the build log says which python stands in for which
    assert any("python:3.12-slim" in line and "CPython 3.13" in line and "no 3.12" in line for line in lines), lines


C_EXTENSION = {
    "src/setup.py": "from setuptools import Extension, setup\n\nsetup(name='fastsum', ext_modules=[Extension('fastsum', ['fastsum.c'])])\n",
    "src/fastsum.c": textwrap.dedent(
        """\
        #include <Python.h>

        static PyObject *add(PyObject *self, PyObject *args) {
            long a, b;
            if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
            return PyLong_FromLong(a + b);
        }
        static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "a + b"}, {NULL, NULL, 0, NULL}};
        static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "fastsum", NULL, -1, methods};
        PyMODINIT_FUNC PyInit_fastsum(void) { return PyModule_Create(&module); }
        """
    ),
    # 3.12+ syntax (PEP 695) and a 3.12+ stdlib function: a SyntaxError / AttributeError on 3.11
    "src/modern.py": "import itertools\n\ntype Pair = tuple[int, int]\n\n"
                     "def pairs(values) -> list[Pair]:\n    return list(itertools.batched(values, 2))\n",
}


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("image, version", [("python:3.13-slim-bookworm", "3.13"), ("python:3.11-slim", "3.11")])
def test_a_c_extension_builds_on_the_python_stand_in_of_its_version(manager, docker_client, image, version):
    # as a reference solution does: a compiler from the distribution, then setuptools against the image's Python.h
    task = make_task(f"cext-{version}", f"FROM {image}\nCOPY src /src\n"
                     "RUN apt-get update && apt-get install -y --no-install-recommends gcc python3-setuptools"
                     " && rm -rf /var/lib/apt/lists/*\n"
                     "RUN cd /src && python setup.py build_ext --inplace\n", files=C_EXTENSION)
    tag = manager.ensure_task_image(task)
    out = run_in(docker_client, tag, "cd /src && python -c 'import sys, fastsum; print(sys.version_info[:2], fastsum.add(2, 40))'"
                 " && python -m venv /tmp/v && /tmp/v/bin/python -c 'print(1)' && pip --version | cut -d' ' -f1")
    major_minor = tuple(int(part) for part in version.split("."))
    assert out.splitlines() == [f"{major_minor} 42", "1", "pip"], out
    modern = run_in(docker_client, tag, "cd /src && python -c 'import modern; print(modern.pairs([1, 2, 3, 4]))' 2>&1 || true")
    if version == "3.13":
        assert modern.strip() == "[(1, 2), (3, 4)]"
    else:
        assert "SyntaxError" in modern  # what a python:3.13 task met on the old stand-in


@pytest.mark.docker
@pytest.mark.slow
def test_a_stand_in_build_that_fails_names_the_missing_debian_package(manager, monkeypatch):
    broken = "terminal-agent/python:test-missing-" + RUN_ID
    monkeypatch.setitem(SUBSTITUTE_DOCKERFILES, broken, SUBSTITUTE_DOCKERFILES[PYTHON_311_IMAGE].replace(
        "python3-dev", "python3.12-dev"))
    with pytest.raises(ImageBuildError) as raised:
        manager._ensure_substitute(broken)
    assert "no package python3.12-dev" in str(raised.value), str(raised.value)
    monkeypatch.setitem(SUBSTITUTE_DEBOOTSTRAPS, broken, DebootstrapRecipe("trixie", ("python3", "python3.12-dev"), ()))
    with pytest.raises(ImageError) as raised:
        manager._ensure_substitute(broken)
    assert "Debian trixie has no package python3.12-dev" in str(raised.value), str(raised.value)


@pytest.mark.docker
def test_cli_build_and_list(manager, tmp_path):
    from typer.testing import CliRunner

    from terminal_agent.cli import app
    from terminal_agent.tasks.csv.format import write_tasks_csv

    good = make_task("cli", "FROM debian:bookworm\nRUN echo hi > /x\n")
    csv_path = write_tasks_csv([good], tmp_path / "tasks.csv")
    runner = CliRunner()
    built = runner.invoke(app, ["images", "build", str(csv_path)])
    assert built.exit_code == 0, built.output
    listed = runner.invoke(app, ["images", "list"])
    assert listed.exit_code == 0 and task_repository(good.task_id) in listed.output and BASE_IMAGE in listed.output


def test_cli_build_reports_bad_rows_with_their_bracketed_field(tmp_path):
    import csv

    from typer.testing import CliRunner

    from terminal_agent.cli import app
    from terminal_agent.tasks.csv.format import write_tasks_csv

    csv_path = write_tasks_csv([make_task("cli-bad", "FROM debian:bookworm\n")], tmp_path / "tasks.csv")
    with open(csv_path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rows[0]["test_weights"] = "{not json [/tmp]"
    with open(csv_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    # --task names no good row, so nothing is built: the run stops after reporting
    result = CliRunner().invoke(app, ["images", "build", str(csv_path), "--task", "absent"])
    assert result.exit_code == 1, result.output
    assert "[test_weights]" in result.output and "tasks.csv:2" in result.output
    assert "not in" in result.output and "absent" in result.output


# --- binary build contexts, docker_image, build deadline ------------------------------------------------
@pytest.mark.docker
def test_binary_files_build_and_arrive_byte_identical(manager, docker_client):
    task = make_task("binary", "FROM debian:bookworm\nCOPY data/ /ctx/data/\n", BINARY_FILES)
    tag = manager.ensure_task_image(task)
    listing = run_in(docker_client, tag, "cd /ctx && sha256sum data/* && zcat data/archive.gz | head -1")
    sums = {line.split()[1]: line.split()[0] for line in listing.splitlines() if line.startswith(tuple("0123456789abcdef"))
            and len(line.split()) == 2}
    expected = {path: hashlib.sha256(content if isinstance(content, bytes) else content.encode()).hexdigest()
                for path, content in BINARY_FILES.items()}
    assert sums == expected
    assert listing.splitlines()[-1] == "payload"


@pytest.mark.docker
def test_a_present_docker_image_is_used_without_a_build(manager, docker_client):
    task = make_task("prebuilt", "FROM nosuchregistry.invalid/never:1\nRUN false\n", docker_image=BASE_IMAGE)
    builds, used = manager.build_count, manager.stats.prebuilt_used
    assert manager.ensure_task_image(task) == BASE_IMAGE
    assert manager.build_count == builds and manager.stats.prebuilt_used == used + 1


@pytest.mark.docker
def test_an_unpullable_docker_image_falls_back_to_the_dockerfile_fast(docker_client, tmp_path):
    server = socket.socket()  # a registry that accepts connections and never answers
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    reference = f"127.0.0.1:{server.getsockname()[1]}/t-bench/env:20250101"
    manager = ImageManager(client=docker_client, cache_dir=tmp_path, pull_timeout_s=2)
    task = make_task("fallback", f"FROM {reference}\nRUN echo hi > /x\n", docker_image=reference)
    try:
        started = time.monotonic()
        with pytest.raises(ImageNotAvailableError) as raised:  # neither the image nor the Dockerfile's base
            manager.ensure_task_image(task)
        assert time.monotonic() - started < 6, "one short pull attempt, no retries"
        message = str(raised.value)
        assert task.task_id in message and "docker_image" in message and reference in message
        assert "Dockerfile" in message and "alias" in message

        aliased = make_task("fallback", "FROM ubuntu:24.04\nRUN echo hi > /x\n", docker_image=reference)
        started = time.monotonic()
        tag = manager.ensure_task_image(aliased)  # the Dockerfile is built, its public base aliased
        assert tag.startswith(task_repository(aliased.task_id) + ":")
        # the silent registry was asked once (its failure is remembered), ubuntu:24.04 once before its alias
        assert manager.stats.prebuilt_fallbacks == 2 and manager.stats.pulls_failed == 2
        assert run_in(docker_client, tag, "cat /x") == "hi\n"
        assert manager.ensure_task_image(aliased) == tag  # then cached by content hash
    finally:
        server.close()
        for image in docker_client.images.list(filters={"label": f"{TASK_LABEL}={task.task_id}"}):
            docker_client.images.remove(image.id, force=True)


@pytest.mark.docker
def test_a_build_past_its_deadline_is_cancelled_with_a_clear_error(manager, docker_client):
    marker = f"ta-build-deadline-{RUN_ID}"
    task = make_task("deadline", f"FROM debian:bookworm\nRUN echo started && sleep 120 && echo {marker}\n",
                     limits=TaskLimits(build_timeout_s=3))
    lines: list[str] = []
    started = time.monotonic()
    with pytest.raises(ImageBuildError) as raised:
        manager.ensure_task_image(task, progress=lines.append)
    assert 2.5 < time.monotonic() - started < 15
    assert "timed out after 3 s" in str(raised.value) and "build_timeout_s" in str(raised.value)
    assert "started" in raised.value.log_tail and "started" in lines

    def build_containers() -> list[dict]:
        return [c for c in docker_client.api.containers(all=True) if marker in (c.get("Command") or "")]

    deadline = time.monotonic() + 20
    while build_containers():  # the daemon cancels the build: its RUN container goes
        assert time.monotonic() < deadline, "the build's RUN container outlived the deadline"
        time.sleep(0.2)
    assert not docker_client.images.list(filters={"label": f"{TASK_LABEL}={task.task_id}"})
