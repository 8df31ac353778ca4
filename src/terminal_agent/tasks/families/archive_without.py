"""Family ``archive-without``: back up a project as a ``.tar.gz``, leaving one kind of file out.

easy: a flat project, exclude ``*.EXT``; one ``tar --exclude`` command.
medium: nested directories, hidden files (which belong in the backup), a name with spaces, and
a directory named ``EXT`` whose files are *not* excluded (only names ending in ``.EXT`` are).
"""

from __future__ import annotations

import random

from terminal_agent.tasks.families.base import (
    Difficulty,
    InstanceParts,
    TaskFamily,
    test_module,
)

EXCLUDED = ("log", "tmp", "cache", "bak", "o", "pyc", "swp", "part", "lock", "out")
KEPT = ("py", "md", "txt", "json", "c", "h", "toml")
STEMS = ("main", "util", "README", "config", "data", "model", "test_main", "notes")


TESTS = '''
import tarfile


def _members():
    with tarfile.open("/app/backup.tar.gz", "r:gz") as archive:
        return {m.name.removeprefix("./"): archive.extractfile(m).read().decode() for m in archive.getmembers() if m.isfile()}


def test_archive_is_a_gzip_tar():
    with tarfile.open("/app/backup.tar.gz", "r:gz") as archive:
        assert archive.getmembers()


def test_every_kept_file_is_inside_with_its_content():
    members = _members()
    missing = [name for name, content in KEPT.items() if members.get(name) != content]
    assert not missing, missing


def test_no_excluded_file_is_inside():
    members = _members()
    inside = [name for name in EXCLUDED if name in members]
    assert not inside, inside
    assert set(members) == set(KEPT), sorted(set(members) ^ set(KEPT))


def test_guard_project_left_in_place():
    for name, content in {**KEPT, **EXCLUDED}.items():
        assert Path("/app", name).read_text() == content, name
'''


class ArchiveWithout(TaskFamily):
    name = "archive-without"
    summary = "Create a .tar.gz backup of a directory without the files of one extension."
    keys = EXCLUDED
    key_meaning = "the extension left out of the backup"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        directories = ["project", "project/src", "project/docs", f"project/{key}"] if medium else ["project"]
        kept: dict[str, str] = {}
        excluded: dict[str, str] = {}
        for index in range(rng.randrange(5, 10)):
            directory = rng.choice(directories)
            kept[f"{directory}/{rng.choice(STEMS)}_{index}.{rng.choice(KEPT)}"] = f"kept {index} {rng.randrange(10**6)}\n"
        for index in range(rng.randrange(2, 6)):
            excluded[f"{rng.choice(directories)}/{rng.choice(STEMS)}_{index}.{key}"] = f"junk {index}\n"
        if medium:
            kept["project/.env.example"] = "TOKEN=\n"
            kept["project/docs/user guide.md"] = "# guide\n"
            kept[f"project/{key}/inside.txt"] = "a kept file in a directory named like the extension\n"
            instruction = (
                "Back up /app/project into /app/backup.tar.gz (a gzip-compressed tar whose member names start with "
                f"'project/'). Leave out every file whose name ends in '.{key}', wherever it is; everything else goes in, "
                "hidden files included. Do not change /app/project."
            )
        else:
            instruction = (
                "Create /app/backup.tar.gz, a gzip-compressed tar of the directory /app/project (members named "
                f"'project/...'), without the *.{key} files. Leave /app/project as it is."
            )
        solution = f"#!/bin/bash\ncd /app && tar --exclude='*.{key}' -czf /app/backup.tar.gz project\n"
        tests = test_module({"KEPT": kept, "EXCLUDED": excluded}, TESTS)
        return InstanceParts(
            title=f"Back up a project without *.{key}",
            instruction=instruction,
            category="backup-archive",
            test_source=tests,
            test_weights={
                "test_archive_is_a_gzip_tar": 0.5,
                "test_every_kept_file_is_inside_with_its_content": 2.0,
                "test_no_excluded_file_is_inside": 1.5,
            },
            guards=["test_guard_project_left_in_place"],
            outputs=["/app/backup.tar.gz"],
            solution=solution,
            files={**kept, **excluded},
            tags=["tar", "backup"],
            parameters={"kept": len(kept), "excluded": len(excluded)},
        )
