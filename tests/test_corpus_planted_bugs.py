"""Codebases with planted bugs (dataset/corpus/_planted_bugs.py): every corpus codebase's list applies to its
program, and a list that does not fit its program is refused with the file and edit named."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

CORPUS_DIR = Path(__file__).resolve().parents[1] / "dataset" / "corpus"
CODEBASES = sorted(path.parent for path in CORPUS_DIR.glob("*_files/*/planted_bugs.toml"))


@pytest.fixture(scope="module")
def planted_bugs():
    sys.path.insert(0, str(CORPUS_DIR))
    try:
        import _planted_bugs
    finally:
        sys.path.remove(str(CORPUS_DIR))
    return _planted_bugs


def test_every_codebase_folder_has_a_program_and_a_list():
    assert len(CODEBASES) >= 8
    for folder in CORPUS_DIR.glob("*_files/*/"):
        if (folder / "hidden_tests.py").is_file():
            assert (folder / "program").is_dir() and (folder / "planted_bugs.toml").is_file(), folder
            assert not (folder / "app").exists() and not (folder / "fixed").exists(), folder


@pytest.mark.parametrize("root", CODEBASES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_each_planted_file_differs_from_the_program_and_says_why(planted_bugs, root):
    codebase = planted_bugs.PlantedCodebase(root)
    program = planted_bugs.files_under(root / "program")
    assert list(codebase.shipped) == list(program), "planting adds or drops no file"
    for entry in codebase.planted:
        assert entry.note.strip(), entry.path
        assert codebase.shipped[entry.path] != program[entry.path], entry.path
        assert codebase.fixed[f"fixed/{entry.path}"] == program[entry.path]
    untouched = set(program) - {entry.path for entry in codebase.planted}
    assert all(codebase.shipped[path] == program[path] for path in untouched)


def test_plant_replaces_each_original_once(planted_bugs):
    edits = (planted_bugs.PlantingEdit("b = 2\n", "b = 3\n"), planted_bugs.PlantingEdit("a = 1\n", ""))
    assert planted_bugs.plant("a = 1\nb = 2\nc = 3\n", edits, "x.py") == "b = 3\nc = 3\n"


@pytest.mark.parametrize(("text", "original", "message"), [
    ("a = 1\na = 1\n", "a = 1\n", "occurs 2 times"),
    ("a = 1\n", "b = 2\n", "occurs 0 times"),
])
def test_plant_refuses_an_original_that_is_not_unique(planted_bugs, text, original, message):
    with pytest.raises(ValueError, match=message):
        planted_bugs.plant(text, (planted_bugs.PlantingEdit(original, "x\n"),), "x.py")


def test_plant_refuses_overlapping_edits(planted_bugs):
    edits = (planted_bugs.PlantingEdit("a = 1\nb", "z"), planted_bugs.PlantingEdit("b = 2\n", "y\n"))
    with pytest.raises(ValueError, match="overlap"):
        planted_bugs.plant("a = 1\nb = 2\n", edits, "x.py")


def test_a_list_naming_a_file_outside_the_program_is_refused(planted_bugs, tmp_path):
    (tmp_path / "program").mkdir()
    (tmp_path / "program" / "a.py").write_text("a = 1\n")
    (tmp_path / "hidden_tests.py").write_text("")
    (tmp_path / "planted_bugs.toml").write_text(
        "[[planted]]\npath = 'b.py'\nnote = 'n'\n[[planted.edit]]\noriginal = 'a'\nplanted = 'b'\n")
    with pytest.raises(ValueError, match="b.py"):
        planted_bugs.PlantedCodebase(tmp_path)
    (tmp_path / "planted_bugs.toml").write_text("[[planted]]\npath = 'a.py'\n")
    with pytest.raises(ValueError, match="needs a path, a note"):
        planted_bugs.PlantedCodebase(tmp_path)
