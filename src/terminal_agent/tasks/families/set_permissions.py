"""Family ``set-permissions``: give the files of one kind an exact mode.

easy: one flat directory; ``chmod MODE /app/share/*.EXT``.
medium: subdirectories, names with spaces, and directories whose mode must not change.
"""

from __future__ import annotations

import random

from terminal_agent.tasks.families.base import (
    FAMILIES,
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


def test_target_files_have_the_mode():
    wrong = {p: oct(_mode(p)) for p in TARGETS if _mode(p) != int(MODE, 8)}
    assert not wrong, wrong


def test_other_files_keep_their_mode():
    wrong = {p: oct(_mode(p)) for p in OTHERS if _mode(p) != int(BASE_MODE, 8)}
    assert not wrong, wrong


def test_directories_and_contents_unchanged():
    for path, content in CONTENTS.items():
        assert Path(path).read_text() == content, path
    wrong = {d: oct(_mode(d)) for d in DIRECTORIES if _mode(d) != 0o755}
    assert not wrong, wrong
'''


@FAMILIES.register("set-permissions")
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
        targets, others = [], []
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
                "must keep its current mode."
            )
            solution = f"#!/bin/bash\nfind /app/share -type f -name '*.{extension}' -exec chmod {key} {{}} +\n"
        else:
            instruction = f"Give every .{extension} file in /app/share the permission mode {key}; leave other files as they are."
            solution = f"#!/bin/bash\nchmod {key} /app/share/*.{extension}\n"
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
                "test_other_files_keep_their_mode": 1.0,
                "test_directories_and_contents_unchanged": 0.5,
            },
            solution=solution,
            files=files,
            dockerfile_steps=steps,
            tags=["chmod", "permissions"],
            parameters={"extension": extension, "targets": len(targets), "base_mode": base_mode},
        )
