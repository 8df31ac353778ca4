"""Edge cases: empty input, whitespace and odd characters in names, unicode."""

from __future__ import annotations

from _spec import Spec

_STATS = '''#!/usr/bin/env python3
"""Print count, min, max and mean of the integers in a file (one per line)."""
import sys

numbers = [int(line) for line in open(sys.argv[1])]
print(f"count={len(numbers)}")
print(f"min={min(numbers)}")
print(f"max={max(numbers)}")
print(f"mean={sum(numbers) / len(numbers):.2f}")
'''

TASKS = [
    Spec(
        task_id="stats-empty-input",
        title="Statistics that survive empty input",
        difficulty="medium",
        category="edge-cases",
        instruction="""
`python3 /app/stats.py FILE` prints `count=`, `min=`, `max=` and `mean=` lines for the integers of FILE
(one per line). It crashes on an empty file and on blank lines. Fix it: blank or whitespace-only lines are
ignored, surrounding spaces are allowed, and with no numbers it prints `count=0`, `min=none`, `max=none`,
`mean=none`. The output for ordinary input stays the same.
""",
        files={"stats.py": _STATS},
        tests='''
def _run(tmp_path, text):
    f = tmp_path / "n.txt"
    f.write_text(text)
    result = run("python3", "/app/stats.py", str(f))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_ordinary_output_unchanged(tmp_path):
    assert _run(tmp_path, "3\\n-1\\n10\\n") == ["count=3", "min=-1", "max=10", "mean=4.00"]


def test_empty_file(tmp_path):
    assert _run(tmp_path, "") == ["count=0", "min=none", "max=none", "mean=none"]


def test_blank_lines_and_spaces(tmp_path):
    assert _run(tmp_path, "\\n  4 \\n\\t\\n 6\\n\\n") == ["count=2", "min=4", "max=6", "mean=5.00"]


def test_only_blank_lines(tmp_path):
    assert _run(tmp_path, "\\n \\n\\t\\n") == ["count=0", "min=none", "max=none", "mean=none"]
''',
        weights={"test_empty_file": 1.0, "test_blank_lines_and_spaces": 1.0, "test_only_blank_lines": 1.0},
        guards=["test_ordinary_output_unchanged"],
        guard_cap=0.25,
        solution='''cat > /app/stats.py <<'EOF'
#!/usr/bin/env python3
"""Print count, min, max and mean of the integers in a file (one per line)."""
import sys

numbers = [int(line) for line in open(sys.argv[1]) if line.strip()]
print(f"count={len(numbers)}")
if numbers:
    print(f"min={min(numbers)}")
    print(f"max={max(numbers)}")
    print(f"mean={sum(numbers) / len(numbers):.2f}")
else:
    print("min=none\\nmax=none\\nmean=none")
EOF''',
        tags=["python", "empty-input"],
    ),
    Spec(
        task_id="count-files-odd-names",
        title="Count files with odd names",
        difficulty="medium",
        category="edge-cases",
        instruction="""
How many regular files are there under /app/drop (recursively)? Some names contain spaces, a leading dash,
a newline or non-ASCII characters. Write the number to /app/count.txt. Also write their paths, relative to
/app/drop, to /app/files.list, each path followed by a NUL byte (not a newline), sorted by byte value (as
`LC_ALL=C sort -z` sorts). Symbolic links are not regular files.
""",
        files={"drop/plain.txt": "1\n", "drop/sub/also plain.txt": "2\n"},
        steps=[
            "RUN cd /app/drop && printf x > \"$(printf 'two\\nlines.txt')\" && printf x > -- && printf x > ' lead space'"
            " && printf x > 'ünïcødé ✓.txt' && mkdir -p 'sub/dir with space' && printf x > 'sub/dir with space/-rf'"
            " && ln -s plain.txt link-to-plain"
        ],
        tests='''
EXPECTED = sorted(["plain.txt", "sub/also plain.txt", "two\\nlines.txt", "--", " lead space", "ünïcødé ✓.txt",
                   "sub/dir with space/-rf"], key=lambda name: name.encode())


def _entries():
    data = Path("/app/files.list").read_bytes()
    assert data.endswith(b"\\0"), "every path must be followed by a NUL byte"
    return [entry.decode() for entry in data[:-1].split(b"\\0")]


def test_count():
    assert int(Path("/app/count.txt").read_text().strip()) == 7


def test_list_names():
    assert sorted(_entries()) == sorted(EXPECTED)


def test_list_sorted_by_bytes():
    assert _entries() == EXPECTED


def test_files_still_there():
    assert sum(1 for p in Path("/app/drop").rglob("*") if p.is_file() and not p.is_symlink()) == 7
    assert Path("/app/drop/link-to-plain").is_symlink()
''',
        weights={"test_count": 1.5, "test_list_names": 1.5, "test_list_sorted_by_bytes": 1.0},
        guards=["test_files_still_there"],
        solution="""cd /app/drop
find . -type f -printf x | wc -c > /app/count.txt
find . -type f -printf '%P\\0' | LC_ALL=C sort -z > /app/files.list""",
        tags=["find", "filenames", "nul"],
    ),
    Spec(
        task_id="normalize-unicode-names",
        title="Normalise file names to NFC",
        difficulty="medium",
        category="edge-cases",
        instruction="""
Files in /app/music were copied from a system that writes file names in Unicode NFD (decomposed accents).
Rename every file and directory under /app/music whose name is not in NFC to its NFC form, so that
`café.txt` is spelt with a single `é` code point. Contents stay the same. No two names collide.
""",
        files={},
        steps=[
            "RUN python3 -c \"import os, unicodedata as u; d = '/app/music'; "
            "[os.makedirs(os.path.join(d, u.normalize('NFD', p)), exist_ok=True) for p in ('Beyoncé', 'Sigur Rós/Ágætis')]; "
            "[open(os.path.join(d, u.normalize('NFD', p)), 'w').write(p) for p in ('café.txt', 'Beyoncé/déjà vu.mp3', 'Sigur Rós/Ágætis/Svefn-g-englar.mp3', 'plain.txt')]\""
        ],
        tests='''
import unicodedata

EXPECTED = ["Beyoncé/déjà vu.mp3", "Sigur Rós/Ágætis/Svefn-g-englar.mp3", "café.txt", "plain.txt"]


def _files():
    root = Path("/app/music")
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_all_names_nfc():
    entries = [str(p.relative_to("/app/music")) for p in Path("/app/music").rglob("*")]
    assert len(entries) == 7 and len(_files()) == 4
    assert all(unicodedata.is_normalized("NFC", name) for name in entries)


def test_expected_paths():
    assert _files() == sorted(unicodedata.normalize("NFC", e) for e in EXPECTED)


def test_contents_kept():
    for name in EXPECTED:
        nfc = unicodedata.normalize("NFC", name)
        assert Path("/app/music", nfc).read_text() == nfc
''',
        weights={"test_all_names_nfc": 1.5, "test_expected_paths": 1.5, "test_contents_kept": 1.0},
        solution='''python3 - <<'EOF'
import os
import shutil
import unicodedata

# shutil.move, not os.rename: overlayfs refuses to rename a directory of a lower image layer (EXDEV)
for root, dirs, files in os.walk("/app/music", topdown=False):
    for name in files + dirs:
        nfc = unicodedata.normalize("NFC", name)
        if nfc != name:
            shutil.move(os.path.join(root, name), os.path.join(root, nfc))
EOF''',
        tags=["unicode", "filenames"],
        held_out=True,
    ),
    Spec(
        task_id="concat-missing-newlines",
        held_out=True,
        title="Concatenate files that lack a final newline",
        difficulty="easy",
        category="edge-cases",
        instruction="""
Concatenate the files /app/parts/part1.txt, part2.txt and part3.txt (in that order) into /app/all.txt so that
every line of every part is its own line: some parts do not end with a newline, and `cat` would glue their
last line to the next file's first line. /app/all.txt must end with a newline. Empty parts add nothing.
""",
        files={"parts/part1.txt": "alpha\nbeta", "parts/part2.txt": "", "parts/part3.txt": "gamma\ndelta\n"},
        tests='''
def _text():
    return Path("/app/all.txt").read_text()


def test_lines():
    assert _text().splitlines() == ["alpha", "beta", "gamma", "delta"]


def test_part_boundaries():
    assert "alpha\\nbeta\\ngamma\\n" in _text()


def test_ends_with_one_newline():
    # from the first part to the last: a copy of one part (the last ends with a newline) earns nothing
    assert _text().startswith("alpha\\n") and _text().endswith("delta\\n") and not _text().endswith("\\n\\n")


def test_parts_unchanged():
    assert all(unchanged(p) for p in ORIGINAL_SHA256)
''',
        weights={"test_lines": 2.0, "test_part_boundaries": 1.0, "test_ends_with_one_newline": 1.0},
        guards=["test_parts_unchanged"],
        solution="awk 1 /app/parts/part1.txt /app/parts/part2.txt /app/parts/part3.txt > /app/all.txt",
        tags=["awk", "newlines"],
        one_command=True,
    ),
    Spec(
        task_id="reverse-words-unicode",
        held_out=True,
        title="Reverse the words of each line",
        difficulty="easy",
        category="edge-cases",
        instruction="""
Write /app/reversed.txt: each line of /app/phrases.txt with its words (separated by single spaces) in reverse
order. The text is UTF-8 with accents, CJK and emoji; keep every character intact. Empty lines stay empty.
""",
        files={"phrases.txt": "hello wide world\n\nçà et là\n東京 大阪 京都\nsolo\nok 👍 🎉 done\n"},
        tests='''
def _lines():
    return Path("/app/reversed.txt").read_text(encoding="utf-8").split("\\n")


def test_ascii_line():
    assert _lines()[0] == "world wide hello"


def test_unicode_lines():
    lines = _lines()
    assert lines[2] == "là et çà" and lines[3] == "京都 大阪 東京" and lines[5] == "done 🎉 👍 ok"


def test_whole_file():
    assert _lines() == ["world wide hello", "", "là et çà", "京都 大阪 東京", "solo", "done 🎉 👍 ok", ""]
''',
        weights={"test_ascii_line": 1.0, "test_unicode_lines": 1.5, "test_whole_file": 1.0},
        solution="""python3 -c 'import sys; sys.stdout.write("".join(" ".join(l.rstrip("\\n").split(" ")[::-1]) + "\\n" for l in open("/app/phrases.txt", encoding="utf-8")))' > /app/reversed.txt""",
        tags=["unicode"],
        one_command=True,
    ),
]
