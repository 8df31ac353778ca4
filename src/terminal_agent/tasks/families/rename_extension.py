"""Family ``rename-extension``: change one file extension to another.

easy: one flat directory of plain names; a ``for`` loop with ``mv`` solves it.
medium: subdirectories, names with spaces, and a name that only *contains* the old extension
(``notes.OLD.keep``), which must not be renamed.
"""

from __future__ import annotations

import random

from terminal_agent.tasks.families.base import (
    Difficulty,
    InstanceParts,
    TaskFamily,
    test_module,
)

PAIRS = (
    "txt>md", "jpeg>jpg", "htm>html", "yml>yaml", "log>txt", "csv>tsv", "markdown>md", "tiff>tif",
    "text>txt", "conf>cfg", "mpeg>mpg", "py3>py",
)
STEMS = ("report", "summary", "draft", "notes", "index", "photo", "backup", "readme", "plan", "todo", "invoice")
OTHER_EXTENSIONS = ("dat", "bin", "json", "ini")


TESTS = '''

def test_no_old_extension_left():
    left = [str(p) for p in Path("/app/files").rglob("*" + OLD) if p.is_file()]
    assert not left, left


def test_files_were_moved_to_their_new_names():
    not_moved = [new for new, old in MOVES.items() if not Path(new).is_file() or Path(old).exists()]
    assert not not_moved, not_moved


def test_renamed_files_keep_their_content():
    for path, content in RENAMED.items():
        assert Path(path).is_file(), path
        assert Path(path).read_text() == content, path


def test_guard_other_files_untouched():
    for path, content in UNTOUCHED.items():
        assert Path(path).read_text() == content, path
    allowed = set(RENAMED) | set(UNTOUCHED) | set(ORIGINAL)
    actual = {str(p) for p in Path("/app/files").rglob("*") if p.is_file()}
    assert actual <= allowed, sorted(actual - allowed)
'''


class RenameExtension(TaskFamily):
    name = "rename-extension"
    summary = "Rename every file with one extension to another, contents and other files untouched."
    keys = PAIRS
    key_meaning = "the old and new extension (old>new)"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        old, new = key.split(">")
        medium = difficulty == "medium"
        directories = ["files", "files/2025", "files/archive"] if medium else ["files"]
        files: dict[str, str] = {}
        renamed: dict[str, str] = {}
        untouched: dict[str, str] = {}
        used: set[str] = set()
        moves: dict[str, str] = {}
        for index in range(rng.randrange(4, 9)):
            directory = rng.choice(directories)
            stem = rng.choice(STEMS) + (f" {index}" if medium and rng.random() < 0.5 else f"_{index}")
            content = f"{stem} #{rng.randrange(10_000)}\n"
            target = f"{directory}/{stem}.{old}"
            if target in used:
                continue
            used.add(target)
            files[target] = content
            renamed[f"/app/{directory}/{stem}.{new}"] = content
            moves[f"/app/{directory}/{stem}.{new}"] = f"/app/{target}"
        for index in range(rng.randrange(2, 5)):
            name = f"{rng.choice(directories)}/{rng.choice(STEMS)}_{index}x.{rng.choice(OTHER_EXTENSIONS)}"
            files[name] = f"keep {index}\n"
            untouched[f"/app/{name}"] = files[name]
        if medium:
            files[f"files/notes.{old}.keep"] = "not this one\n"
            untouched[f"/app/files/notes.{old}.keep"] = "not this one\n"
            instruction = (
                f"Under /app/files (including its subdirectories) rename every file whose name ends in '.{old}' so it "
                f"ends in '.{new}' instead, keeping it in the same directory. Some names contain spaces. Do not touch "
                "any other file."
            )
            solution = (
                "#!/bin/bash\n"
                f"find /app/files -type f -name '*.{old}' -print0 | while IFS= read -r -d '' f; do\n"
                f"  mv -- \"$f\" \"${{f%.{old}}}.{new}\"\n"
                "done\n"
            )
        else:
            instruction = f"Rename every *.{old} file in /app/files to *.{new} (same name, new extension)."
            solution = f"#!/bin/bash\ncd /app/files\nfor f in *.{old}; do mv -- \"$f\" \"${{f%.{old}}}.{new}\"; done\n"
        original = sorted(f"/app/{name}" for name in files if f"/app/{name}" not in untouched)
        tests = test_module({"OLD": f".{old}", "RENAMED": renamed, "UNTOUCHED": untouched, "ORIGINAL": original, "MOVES": moves},
                            TESTS)
        return InstanceParts(
            title=f"Rename .{old} files to .{new}",
            instruction=instruction,
            category="file-operations",
            test_source=tests,
            test_weights={
                "test_no_old_extension_left": 1.0,
                "test_files_were_moved_to_their_new_names": 1.5,
                "test_renamed_files_keep_their_content": 1.0,
            },
            guards=["test_guard_other_files_untouched"],
            solution=solution,
            files=files,
            tags=["mv", "files"],
            parameters={"renamed": len(renamed), "old": old, "new": new},
        )
