"""File operations."""

from __future__ import annotations

from _spec import Spec

_dupe_files = {
    "photos/a.jpg": "JPEGDATA-1\n",
    "photos/b.jpg": "JPEGDATA-2\n",
    "photos/copy of a.jpg": "JPEGDATA-1\n",
    "photos/old/a-2019.jpg": "JPEGDATA-1\n",
    "photos/old/c.jpg": "JPEGDATA-3\n",
    "photos/old/b again.jpg": "JPEGDATA-2\n",
    "photos/unique.png": "PNG\n",
}
_dupe_groups = [
    ["/app/photos/a.jpg", "/app/photos/copy of a.jpg", "/app/photos/old/a-2019.jpg"],
    ["/app/photos/b.jpg", "/app/photos/old/b again.jpg"],
]

_dupe_lines = ["\t".join(g) for g in _dupe_groups]

_inbox = {
    "inbox/report.pdf": "pdf\n",
    "inbox/photo.JPG": "jpg upper\n",
    "inbox/notes.txt": "txt\n",
    "inbox/data.tar.gz": "gz\n",
    "inbox/todo.txt": "todo\n",
    "inbox/Makefile": "all:\n",
    "inbox/song.mp3": "mp3\n",
}
_organized = {
    "/app/inbox/pdf/report.pdf": "pdf\n",
    "/app/inbox/jpg/photo.JPG": "jpg upper\n",
    "/app/inbox/txt/notes.txt": "txt\n",
    "/app/inbox/gz/data.tar.gz": "gz\n",
    "/app/inbox/txt/todo.txt": "todo\n",
    "/app/inbox/other/Makefile": "all:\n",
    "/app/inbox/mp3/song.mp3": "mp3\n",
}

_tree = {
    "data/keep.txt": "k\n",
    "data/sub/also keep.csv": "a,b\n",
    "data/sub/deeper/x.log": "x\n",
    "data/sub/just a newline.txt": "\n",
    "data/.hidden-config": "x=1\n",
}
_empty_top = ["data/empty.txt", "data/.empty-hidden"]
_empty_nested = ["data/sub/nothing here.txt", "data/sub/deeper/zero.bin"]
_empty_odd = ["data/sub/-dash.txt", "data/sub/deeper/ leading space"]
_empty_created = _empty_top + _empty_nested + _empty_odd
_empty_dirs = ["data/empty dir", "data/sub/deeper/void"]

_flat_src = {
    "nested/a/readme.txt": "a readme\n",
    "nested/b/readme.txt": "b readme\n",
    "nested/b/c/readme.txt": "c readme\n",
    "nested/b/c/unique.md": "unique\n",
    "nested/top.txt": "top\n",
}
_flat_expected = {
    "/app/flat/a_readme.txt": "a readme\n",
    "/app/flat/b_readme.txt": "b readme\n",
    "/app/flat/b_c_readme.txt": "c readme\n",
    "/app/flat/b_c_unique.md": "unique\n",
    "/app/flat/top.txt": "top\n",
}

_usage = {
    "srv/web/index.html": "x" * 1200,
    "srv/web/static/app.js": "y" * 3000,
    "srv/db/dump.sql": "z" * 5000,
    "srv/cache/a": "c" * 10,
    "srv/cache/b": "c" * 90,
    "srv/logs/today.log": "l" * 700,
}
_usage_report = ["db 5000", "web 4200", "logs 700", "cache 100"]

TASKS = [
    Spec(
        task_id="find-duplicate-files",
        title="Group duplicate files",
        difficulty="medium",
        category="file-operations",
        instruction="""
Find the files under /app/photos (recursively) that have exactly the same content as another file. Write
/app/duplicates.txt: one line per group of identical files, the absolute paths separated by a TAB and sorted
within the line; the lines sorted too. Files without a twin are not listed. Some names contain spaces.
""",
        files=_dupe_files,
        tests=f'''
EXPECTED = {_dupe_lines!r}


def _lines():
    return Path("/app/duplicates.txt").read_text().splitlines()


def test_groups_found():
    assert sorted(set(p for l in _lines() for p in l.split("\\t"))) == sorted(p for l in EXPECTED for p in l.split("\\t"))


def test_grouping():
    assert sorted(tuple(sorted(l.split("\\t"))) for l in _lines()) == sorted(tuple(l.split("\\t")) for l in EXPECTED)


def test_exact_format():
    assert _lines() == EXPECTED
''',
        weights={"test_groups_found": 1.5, "test_grouping": 1.5, "test_exact_format": 1.0},
        solution='''python3 - <<'EOF'
import hashlib
from pathlib import Path

groups = {}
for path in Path("/app/photos").rglob("*"):
    if path.is_file():
        groups.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), []).append(str(path))
lines = sorted("\\t".join(sorted(g)) for g in groups.values() if len(g) > 1)
Path("/app/duplicates.txt").write_text("".join(line + "\\n" for line in lines))
EOF''',
        tags=["hashing", "find"],
        held_out=True,
    ),
    Spec(
        task_id="organize-by-extension",
        title="Sort files into folders by extension",
        difficulty="medium",
        category="file-operations",
        instruction="""
Move every file directly in /app/inbox into a subdirectory of /app/inbox named after its extension in lower
case (the part after the last dot: `photo.JPG` goes to `jpg/`, `data.tar.gz` to `gz/`). Files without an
extension go to `other/`. Keep file names and contents unchanged.
""",
        files=_inbox,
        tests=f'''
EXPECTED = {_organized!r}


def test_files_in_their_folders():
    wrong = [p for p, content in EXPECTED.items() if not Path(p).is_file() or Path(p).read_text() != content]
    assert not wrong, wrong


def test_upper_case_and_double_extensions():
    assert Path("/app/inbox/jpg/photo.JPG").read_text() == EXPECTED["/app/inbox/jpg/photo.JPG"]
    assert Path("/app/inbox/gz/data.tar.gz").read_text() == EXPECTED["/app/inbox/gz/data.tar.gz"]
    assert not Path("/app/inbox/JPG").exists() and not Path("/app/inbox/tar.gz").exists()


def test_moved_not_copied():
    assert [p.name for p in Path("/app/inbox").iterdir() if p.is_file()] == []
    files = sorted(str(p) for p in Path("/app/inbox").rglob("*") if p.is_file())
    assert files == sorted(EXPECTED)
''',
        weights={"test_files_in_their_folders": 2.0, "test_upper_case_and_double_extensions": 1.0, "test_moved_not_copied": 1.0},
        solution='''cd /app/inbox
for f in *; do
  [ -f "$f" ] || continue
  case "$f" in
    *.*) ext=$(printf '%s' "${f##*.}" | tr 'A-Z' 'a-z') ;;
    *) ext=other ;;
  esac
  mkdir -p "$ext" && mv -- "$f" "$ext/"
done''',
        tags=["mv", "bash"],
    ),
    Spec(
        task_id="delete-empty-files",
        title="Delete the empty files",
        difficulty="easy",
        category="file-operations",
        instruction="""
Delete every empty (zero-byte) file under /app/data, subdirectories and hidden files included. Keep every
other file and every directory, empty directories too.
""",
        files=_tree,
        steps=["RUN cd /app && touch -- " + " ".join(f"'{p}'" for p in _empty_created)
               + " && mkdir -p -- " + " ".join(f"'{d}'" for d in _empty_dirs)],
        tests=f'''
KEPT = {["/app/" + p for p in _tree]!r}
DIRS = {["/app/data", "/app/data/sub", "/app/data/sub/deeper"] + ["/app/" + d for d in _empty_dirs]!r}


def _gone(paths):
    return [p for p in paths if os.path.lexists(p)] == []


def test_top_level_empty_files_gone():
    assert _gone({["/app/" + p for p in _empty_top]!r})


def test_nested_empty_files_gone():
    assert _gone({["/app/" + p for p in _empty_nested]!r})


def test_odd_names_gone():
    assert _gone({["/app/" + p for p in _empty_odd]!r})


def test_other_files_kept():
    assert all(unchanged(p) for p in KEPT)


def test_directories_kept():
    assert all(Path(d).is_dir() for d in DIRS)
''',
        weights={"test_top_level_empty_files_gone": 1.0, "test_nested_empty_files_gone": 1.0, "test_odd_names_gone": 1.0},
        guards=["test_other_files_kept", "test_directories_kept"],
        solution="find /app/data -type f -empty -delete",
        tags=["find"],
        one_command=True,
    ),
    Spec(
        task_id="repair-symlinks",
        title="Repair the broken links",
        difficulty="medium",
        category="file-operations",
        instruction="""
The data files moved from /app/old_store to /app/store (same relative paths), so the symbolic links in
/app/links are broken. Make every link in /app/links point to the same file under /app/store, using absolute
targets (some links are relative). Links that still work must stay as they are, and every link must remain a
symbolic link.
""",
        files={"store/a.txt": "A\n", "store/sub/b.txt": "B\n", "store/c d.txt": "CD\n", "other/ok.txt": "OK\n"},
        steps=[
            "RUN mkdir -p /app/links && cd /app/links && ln -s /app/old_store/a.txt a && ln -s /app/old_store/sub/b.txt b"
            " && ln -s '/app/old_store/c d.txt' 'c d' && ln -s /app/other/ok.txt ok && ln -s ../old_store/sub/b.txt relative-b"
        ],
        tests='''
LINKS = {"a": "/app/store/a.txt", "b": "/app/store/sub/b.txt", "c d": "/app/store/c d.txt", "relative-b": "/app/store/sub/b.txt"}


def test_links_resolve():
    for name in ("a", "b", "c d"):
        assert Path("/app/links", name).resolve() == Path(LINKS[name]), name


def test_relative_link_repaired():
    assert Path("/app/links/relative-b").resolve() == Path(LINKS["relative-b"])


def test_still_symlinks_with_absolute_targets():
    for name, target in LINKS.items():
        link = Path("/app/links", name)
        assert link.is_symlink() and os.readlink(link) == target, name


def test_working_link_untouched():
    assert os.readlink("/app/links/ok") == "/app/other/ok.txt"
    assert sorted(os.listdir("/app/links")) == sorted(list(LINKS) + ["ok"])


def test_store_unchanged():
    assert all(unchanged(p) for p in ORIGINAL_SHA256)
''',
        weights={"test_links_resolve": 2.0, "test_relative_link_repaired": 1.0, "test_still_symlinks_with_absolute_targets": 1.0},
        guards=["test_working_link_untouched", "test_store_unchanged"],
        solution='''cd /app/links
for link in *; do
  [ -L "$link" ] || continue
  [ -e "$link" ] && continue
  target=$(readlink -- "$link")
  case "$target" in
    /*) ;;
    *) target=$(realpath -m -- "/app/links/$target") ;;
  esac
  case "$target" in
    /app/old_store/*) ln -sfn -- "/app/store/${target#/app/old_store/}" "$link" ;;
  esac
done''',
        tags=["symlinks"],
        held_out=True,
    ),
    Spec(
        task_id="newest-files",
        title="The three newest files",
        difficulty="easy",
        category="file-operations",
        instruction="""
Write the names (not paths) of the three most recently modified files in /app/reports to /app/newest.txt,
newest first, one per line.
""",
        files={f"reports/r{n}.txt": f"report {n}\n" for n in range(1, 7)},
        steps=[
            "RUN cd /app/reports && touch -d '2026-01-03' r1.txt && touch -d '2026-01-09' r2.txt && touch -d '2026-01-01' r3.txt"
            " && touch -d '2026-01-07' r4.txt && touch -d '2026-01-05' r5.txt && touch -d '2026-01-02' r6.txt"
        ],
        tests='''
def _got():
    return Path("/app/newest.txt").read_text().split()


def test_three_names():
    got = _got()
    assert len(got) == 3 and set(got) <= set(os.listdir("/app/reports"))


def test_right_files():
    assert sorted(_got()) == ["r2.txt", "r4.txt", "r5.txt"]


def test_newest_first():
    assert _got() == ["r2.txt", "r4.txt", "r5.txt"]
''',
        weights={"test_three_names": 0.5, "test_right_files": 2.0, "test_newest_first": 1.0},
        solution="ls -t /app/reports | head -n 3 > /app/newest.txt",
        tags=["ls"],
        one_command=True,
    ),
    Spec(
        task_id="flatten-directory",
        title="Flatten a directory tree",
        difficulty="medium",
        category="file-operations",
        instruction="""
Copy every file under /app/nested into the single directory /app/flat. The new name is the file's path
relative to /app/nested with each `/` replaced by `_` (`b/c/readme.txt` becomes `b_c_readme.txt`). Keep the
contents; leave /app/nested unchanged.
""",
        files=_flat_src,
        tests=f'''
EXPECTED = {_flat_expected!r}


def test_names():
    assert sorted(str(p) for p in Path("/app/flat").iterdir()) == sorted(EXPECTED)
    # the files of the tree, each once (under any of the names): the right names over made-up or repeated
    # contents earn nothing
    assert sorted(Path(p).read_text() for p in EXPECTED) == sorted(EXPECTED.values())


def test_contents():
    for path, content in EXPECTED.items():
        assert Path(path).read_text() == content


def test_same_name_in_different_folders():
    readmes = ["/app/flat/a_readme.txt", "/app/flat/b_readme.txt", "/app/flat/b_c_readme.txt"]
    assert [Path(p).read_text() for p in readmes] == [EXPECTED[p] for p in readmes]


def test_source_unchanged():
    assert all(unchanged(p) for p in ORIGINAL_SHA256)
''',
        weights={"test_names": 1.5, "test_contents": 1.5, "test_same_name_in_different_folders": 1.0},
        guards=["test_source_unchanged"],
        solution='''mkdir -p /app/flat
cd /app/nested
find . -type f -print0 | while IFS= read -r -d '' f; do
  rel=${f#./}
  cp -- "$f" "/app/flat/${rel//\\//_}"
done''',
        tags=["find", "bash"],
    ),
    Spec(
        task_id="disk-usage-report",
        held_out=True,
        title="Bytes per directory",
        difficulty="medium",
        category="file-operations",
        instruction="""
For each directory directly under /app/srv, compute the total size in bytes of the files it contains
(recursively; apparent sizes, not disk blocks). Write /app/usage.txt with lines `NAME BYTES`, largest first.
""",
        files=_usage,
        tests=f'''
EXPECTED = {_usage_report!r}


def _lines():
    return Path("/app/usage.txt").read_text().splitlines()


def test_all_directories():
    assert sorted(l.split()[0] for l in _lines()) == sorted(e.split()[0] for e in EXPECTED)


def test_sizes():
    assert sorted(_lines()) == sorted(EXPECTED)


def test_largest_first():
    assert _lines() == EXPECTED
''',
        weights={"test_all_directories": 0.5, "test_sizes": 2.0, "test_largest_first": 1.0},
        solution='''for d in /app/srv/*/; do
  name=$(basename "$d")
  bytes=$(find "$d" -type f -printf '%s\\n' | awk '{s += $1} END {print s + 0}')
  echo "$name $bytes"
done | sort -k2,2nr > /app/usage.txt''',
        tags=["find", "du"],
    ),
]
