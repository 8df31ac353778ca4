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
        assert entry.note.strip(), entry.name
        assert codebase.shipped[entry.path] != program[entry.path], entry.path
        assert codebase.fixed[f"fixed/{entry.path}"] == program[entry.path]
    untouched = set(program) - {entry.path for entry in codebase.planted}
    assert all(codebase.shipped[path] == program[path] for path in untouched)


def _bug(planted_bugs, name, *edits):
    return planted_bugs.PlantedBug(name=name, path="x.py", note="n",
                                   edits=tuple(planted_bugs.PlantingEdit(*edit) for edit in edits))


def test_plant_applies_the_bugs_in_order(planted_bugs):
    bugs = [_bug(planted_bugs, "one", ("b = 2\n", "b = 3\n"), ("a = 1\n", "")),
            _bug(planted_bugs, "two", ("b = 3\n", "b = 4\n"))]
    program = {"x.py": "a = 1\nb = 2\nc = 3\n", "y.py": "b = 2\n"}
    assert planted_bugs.plant(program, bugs) == {"x.py": "b = 4\nc = 3\n", "y.py": "b = 2\n"}


@pytest.mark.parametrize(("text", "edit", "message"), [
    ("a = 1\na = 1\n", ("a = 1\n", "x\n"), "occurs 2 times in x.py"),
    ("a = 1\n", ("b = 2\n", "x\n"), "occurs 0 times in x.py"),
    ("a = 1\n", ("a = 1\n", "a = 1\n"), "planted text is its original"),
])
def test_plant_refuses_an_edit_that_does_not_fit(planted_bugs, text, edit, message):
    with pytest.raises(ValueError, match=f"planted bug wrong: .*{message}"):
        planted_bugs.plant({"x.py": text}, [_bug(planted_bugs, "wrong", edit)])


def test_a_list_naming_a_file_outside_the_program_is_refused(planted_bugs, tmp_path):
    (tmp_path / "program").mkdir()
    (tmp_path / "program" / "a.py").write_text("a = 1\n")
    (tmp_path / "hidden_tests.py").write_text("")
    (tmp_path / "planted_bugs.toml").write_text(
        "[[planted]]\nname = 'b'\npath = 'b.py'\nnote = 'n'\n[[planted.edit]]\noriginal = 'a'\nplanted = 'b'\n")
    with pytest.raises(ValueError, match="b.py is not a file of the program"):
        planted_bugs.PlantedCodebase(tmp_path)
    (tmp_path / "planted_bugs.toml").write_text("[[planted]]\nname = 'b'\npath = 'a.py'\n")
    with pytest.raises(ValueError, match="needs a name, a path, a note"):
        planted_bugs.PlantedCodebase(tmp_path)
