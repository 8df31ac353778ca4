"""Codebases with planted bugs: the working program as ordinary files plus a list of the bugs planted in it.

A codebase folder holds ``program/`` (the program as the reference solution leaves it), ``planted_bugs.toml`` (per
file, the edits that plant its bugs: each ``original`` text occurs exactly once in the program file and becomes
``planted``) and, where the task has them, ``fixtures/`` and ``hidden_tests.py``. The task ships the program with
every edit applied; the reference solution puts the listed files back as they are in ``program/``.
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
class PlantedFile:
    """The bugs planted in one program file: what they are (``note``) and the edits that make them."""

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


def read_planted_files(list_path: Path) -> list[PlantedFile]:
    """The entries of a ``planted_bugs.toml``, checked for the fields each needs."""
    data = tomllib.loads(list_path.read_text(encoding="utf-8"))
    planted = []
    for number, entry in enumerate(data.get("planted", []), start=1):
        if not isinstance(entry.get("path"), str) or not isinstance(entry.get("note"), str) or not entry.get("edit"):
            raise ValueError(f"{list_path}: entry {number} needs a path, a note and at least one [[planted.edit]]")
        edits = []
        for edit in entry["edit"]:
            if not isinstance(edit.get("original"), str) or not isinstance(edit.get("planted"), str):
                raise ValueError(f"{list_path}: an edit of {entry['path']} needs `original` and `planted` texts")
            edits.append(PlantingEdit(original=edit["original"], planted=edit["planted"]))
        planted.append(PlantedFile(path=entry["path"], note=entry["note"], edits=tuple(edits)))
    paths = [entry.path for entry in planted]
    if len(set(paths)) != len(paths):
        raise ValueError(f"{list_path}: a file is listed twice")
    return planted


def plant(text: str, edits: tuple[PlantingEdit, ...], where: str) -> str:
    """``text`` with every edit applied; each edit's original must occur exactly once in ``text`` and no two may
    overlap."""
    spans = []
    for edit in edits:
        count = text.count(edit.original) if edit.original else 0
        if count != 1:
            raise ValueError(f"{where}: a planted edit's original text occurs {count} times, not once: "
                             f"{edit.original[:80]!r}")
        start = text.index(edit.original)
        spans.append((start, start + len(edit.original), edit.planted))
    spans.sort()
    pieces, position = [], 0
    for start, end, planted in spans:
        if start < position:
            raise ValueError(f"{where}: two planted edits overlap at character {start}")
        pieces += [text[position:start], planted]
        position = end
    return "".join(pieces) + text[position:]


class PlantedCodebase:
    """One codebase folder, read: ``shipped`` (the program with its bugs planted, as /app gets it), ``fixed`` (the
    planted files as the program has them, keyed ``fixed/<path>`` for /solution/fixed), ``fixtures`` and
    ``tests`` (the hidden tests' source)."""

    def __init__(self, root: Path):
        program = files_under(root / "program")
        planted = read_planted_files(root / "planted_bugs.toml")
        by_path = {entry.path: entry for entry in planted}
        missing = sorted(set(by_path) - set(program))
        if missing:
            raise ValueError(f"{root}: planted_bugs.toml names files not in program/: {', '.join(missing)}")
        self.planted = planted
        self.shipped = {path: plant(text, by_path[path].edits, f"{root.name}/{path}") if path in by_path else text
                        for path, text in program.items()}
        self.fixed = {f"fixed/{path}": text for path, text in program.items() if path in by_path}
        self.fixtures = files_under(root / "fixtures")
        self.tests = (root / "hidden_tests.py").read_text(encoding="utf-8")
