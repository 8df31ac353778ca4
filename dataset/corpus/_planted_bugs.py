"""Codebases with planted bugs: the working program as ordinary files plus a list of the bugs planted in it.

A codebase folder holds ``program/`` (the program as the reference solution leaves it), ``planted_bugs.toml`` (the
planted bugs in order, each with a name, the file it is in, a note saying what it is, and the edits that plant it:
each edit's ``original`` text occurs exactly once in the file as the earlier edits left it, and becomes
``planted``), ``hidden_tests.py`` and, where the task has them, ``fixtures/``. The task ships the program with every
edit applied; the reference solution either puts the planted files back as they are in ``program/`` or undoes the
named bugs (hard_tooling.py).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PlantingEdit:
    """One text replacement: ``original`` (unique in the program file) becomes ``planted`` in the shipped file."""

    original: str
    planted: str


@dataclass(frozen=True)
class PlantedBug:
    """One planted bug: its ``name`` (unique in its list), the program file it is in, what it is (``note``) and the
    edits that plant it."""

    name: str
    path: str
    note: str
    edits: tuple[PlantingEdit, ...]


def files_under(folder: Path, prefix: str = "") -> dict[str, str]:
    """The text of every file below ``folder``, keyed by ``prefix`` + its path relative to ``folder`` (caches
    skipped); empty when the folder does not exist."""
    if not folder.is_dir():
        return {}
    return {prefix + path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}


def read_planted_bugs(list_path: Path) -> list[PlantedBug]:
    """The entries of a ``planted_bugs.toml``, in order, checked for the fields each needs."""
    data = tomllib.loads(list_path.read_text(encoding="utf-8"))
    planted = []
    for number, entry in enumerate(data.get("planted", []), start=1):
        if not all(isinstance(entry.get(key), str) for key in ("name", "path", "note")) or not entry.get("edit"):
            raise ValueError(f"{list_path}: entry {number} needs a name, a path, a note and at least one "
                             "[[planted.edit]]")
        edits = []
        for edit in entry["edit"]:
            if not isinstance(edit.get("original"), str) or not isinstance(edit.get("planted"), str):
                raise ValueError(f"{list_path}: an edit of {entry['name']} needs `original` and `planted` texts")
            edits.append(PlantingEdit(original=edit["original"], planted=edit["planted"]))
        planted.append(PlantedBug(name=entry["name"], path=entry["path"], note=entry["note"], edits=tuple(edits)))
    names = [entry.name for entry in planted]
    if len(set(names)) != len(names):
        raise ValueError(f"{list_path}: a bug name is used twice")
    return planted


def plant(program: dict[str, str], bugs: list[PlantedBug]) -> dict[str, str]:
    """``program`` with every bug planted, in order; each edit's original text must occur exactly once in its file
    as the earlier edits left it, and differ from its planted text."""
    files = dict(program)
    for bug in bugs:
        if bug.path not in files:
            raise ValueError(f"planted bug {bug.name}: {bug.path} is not a file of the program")
        for edit in bug.edits:
            count = files[bug.path].count(edit.original) if edit.original else 0
            if count != 1:
                raise ValueError(f"planted bug {bug.name}: an original text occurs {count} times in {bug.path}, "
                                 f"not once: {edit.original[:80]!r}")
            if edit.planted == edit.original:
                raise ValueError(f"planted bug {bug.name}: an edit's planted text is its original text")
            files[bug.path] = files[bug.path].replace(edit.original, edit.planted)
    return files


class PlantedCodebase:
    """One codebase folder, read: ``planted`` (its bugs), ``shipped`` (the program with them planted, as /app gets
    it), ``fixed`` (the planted files as the program has them, keyed ``fixed/<path>`` for /solution/fixed),
    ``fixtures`` and ``tests`` (the hidden tests' source)."""

    def __init__(self, root: Path):
        program = files_under(root / "program")
        self.planted = read_planted_bugs(root / "planted_bugs.toml")
        self.shipped = plant(program, self.planted)
        changed = {bug.path for bug in self.planted}
        self.fixed = {f"fixed/{path}": text for path, text in program.items() if path in changed}
        self.fixtures = files_under(root / "fixtures")
        self.tests = (root / "hidden_tests.py").read_text(encoding="utf-8")
