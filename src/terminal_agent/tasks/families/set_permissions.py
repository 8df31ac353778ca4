"""Family ``set-permissions``: give the files of one kind an exact mode.

easy: one flat directory; ``chmod MODE /app/share/*.EXT``, and the changed paths listed in ``/app/changed.txt``.
medium: subdirectories, names with spaces, and directories whose mode must not change.
"""

from __future__ import annotations

import random

from terminal_agent.tasks.families.base import (
    Difficulty,
    InstanceParts,
    TaskFamily,
    test_module,
)

MODES = ("600", "640", "644", "700", "750", "755", "444", "400", "660", "664", "711", "555")
EXTENSIONS = ("sh", "key", "pem", "cfg", "env", "db")
STEMS = ("deploy", "server", "client", "backup", "local", "prod", "stage", "tool")


TESTS = '''

def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def _listed():
    return [line.strip() for line in Path("/app/changed.txt").read_text().splitlines() if line.strip()]


def test_target_files_have_the_mode():
    wrong = {p: oct(_mode(p)) for p in TARGETS if _mode(p) != int(MODE, 8)}
    assert not wrong, wrong


def test_changed_list_names_every_target():
    missing = sorted(set(TARGETS) - set(_listed()))
    assert not missing, missing


def test_changed_list_names_nothing_else():
    listed = _listed()
    assert listed and len(listed) == len(set(listed)), "changed.txt is empty or repeats a path"
    assert set(listed) <= set(TARGETS), sorted(set(listed) - set(TARGETS))


def test_guard_other_files_keep_their_mode():
    wrong = {p: oct(_mode(p)) for p in OTHERS if _mode(p) != int(BASE_MODE, 8)}
    assert not wrong, wrong


def test_guard_directories_and_contents_unchanged():
    for path, content in CONTENTS.items():
        assert Path(path).read_text() == content, path
    wrong = {d: oct(_mode(d)) for d in DIRECTORIES if _mode(d) != 0o755}
    assert not wrong, wrong
'''


class SetPermissions(TaskFamily):
    name = "set-permissions"
    summary = "chmod every file of one extension to an exact mode; other files and directories keep theirs."
    keys = MODES
    key_meaning = "the mode set"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        extension = rng.choice(EXTENSIONS)
        base_mode = "640" if key == "644" else "644"
        directories = ["share", "share/keys", "share/old scripts"] if medium else ["share"]
        files: dict[str, str] = {}
        targets: list[str] = []
        others: list[str] = []
        for index in range(rng.randrange(5, 10)):
            directory = rng.choice(directories)
            ext = extension if index % 2 == 0 or rng.random() < 0.3 else rng.choice([e for e in EXTENSIONS if e != extension])
            separator = " " if medium and rng.random() < 0.4 else "_"
            name = f"{directory}/{rng.choice(STEMS)}{separator}{index}.{ext}"
            files[name] = f"# {name}\n"
            (targets if ext == extension else others).append(f"/app/{name}")
        used_dirs = sorted({f"/app/{name.rsplit('/', 1)[0]}" for name in files})
        steps = [
            "RUN find /app/share -type d -exec chmod 755 {} + && find /app/share -type f -exec chmod "
            + base_mode
            + " {} +"
        ]
        if medium:
            instruction = (
                f"Set the permission mode of every file under /app/share (subdirectories too) whose name ends in "
                f".{extension} to exactly {key}. Some names contain spaces. Every other file, and every directory, "
                "must keep its current mode. Then list the files you changed in /app/changed.txt: one absolute "
                "path per line."
            )
            solution = (
                f"#!/bin/bash\nfind /app/share -type f -name '*.{extension}' -print > /app/changed.txt\n"
                f"find /app/share -type f -name '*.{extension}' -exec chmod {key} {{}} +\n"
            )
        else:
            instruction = (
                f"Give every .{extension} file in /app/share the permission mode {key}; leave other files as they are. "
                "Write the absolute paths of the files you changed to /app/changed.txt, one per line."
            )
            solution = f"#!/bin/bash\nchmod {key} /app/share/*.{extension}\nls -d /app/share/*.{extension} > /app/changed.txt\n"
        tests = test_module(
            {
                "MODE": key,
                "BASE_MODE": base_mode,
                "TARGETS": targets,
                "OTHERS": others,
                "DIRECTORIES": used_dirs,
                "CONTENTS": {f"/app/{n}": t for n, t in files.items()},
            },
            TESTS,
        )
        return InstanceParts(
            title=f"chmod {key} the .{extension} files",
            instruction=instruction,
            category="file-operations",
            test_source=tests,
            test_weights={
                "test_target_files_have_the_mode": 2.0,
                "test_changed_list_names_every_target": 1.0,
                "test_changed_list_names_nothing_else": 0.5,
            },
            guards=["test_guard_other_files_keep_their_mode", "test_guard_directories_and_contents_unchanged"],
            outputs=["/app/changed.txt"],
            solution=solution,
            files=files,
            dockerfile_steps=steps,
            tags=["chmod", "permissions"],
            parameters={"extension": extension, "targets": len(targets), "base_mode": base_mode},
        )
