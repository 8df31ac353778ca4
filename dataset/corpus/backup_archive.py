"""Backup and archive tasks."""

from __future__ import annotations

from _spec import Spec

_project = {
    "project/src/main.py": "print('hi')\n",
    "project/src/util.py": "X = 1\n",
    "project/README.md": "# project\n",
    "project/config/app.ini": "[app]\nname = demo\n",
}

TASKS = [
    Spec(
        task_id="incremental-backup",
        outputs=['incremental/docs/changed.md', 'incremental/new dir/fresh file.txt', 'incremental/src/app.py'],
        title="Copy what changed since the last backup",
        difficulty="medium",
        category="backup-archive",
        instruction="""
/app/last_backup is a marker file whose modification time is the time of the last backup. Copy every file
under /app/work that was modified more recently than the marker into /app/incremental, keeping the paths
relative to /app/work (`/app/work/a/b.txt` goes to `/app/incremental/a/b.txt`) and the modification times.
Copy nothing else; some names contain spaces. Then set the marker's modification time to now.
""",
        files={
            "work/old.txt": "old\n",
            "work/docs/changed.md": "changed\n",
            "work/docs/old notes.md": "old notes\n",
            "work/new dir/fresh file.txt": "fresh\n",
            "work/src/app.py": "app\n",
        },
        steps=[
            "RUN cd /app/work && touch -d '2026-01-01 10:00' old.txt 'docs/old notes.md' && touch -d '2026-01-01 12:00' /app/last_backup"
            " && touch -d '2026-01-02 09:00' docs/changed.md 'new dir/fresh file.txt' && touch -d '2026-01-03 09:00' src/app.py"
        ],
        tests='''
CHANGED = {"docs/changed.md": "changed\\n", "new dir/fresh file.txt": "fresh\\n", "src/app.py": "app\\n"}


def _copied():
    root = Path("/app/incremental")
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_changed_files_copied():
    for rel, content in CHANGED.items():
        assert Path("/app/incremental", rel).read_text() == content, rel


def test_nothing_else_copied():
    assert _copied() == set(CHANGED)
    for rel, content in CHANGED.items():  # empty stand-ins are not copies
        assert Path("/app/incremental", rel).read_text() == content, rel


def test_times_kept_and_marker_moved():
    for rel in CHANGED:
        assert int(os.stat(Path("/app/incremental", rel)).st_mtime) == int(os.stat(Path("/app/work", rel)).st_mtime)
    assert os.stat("/app/last_backup").st_mtime > os.stat("/app/work/src/app.py").st_mtime
''',
        weights={"test_changed_files_copied": 1.0, "test_nothing_else_copied": 1.0, "test_times_kept_and_marker_moved": 1.0},
        solution='''cd /app/work
find . -type f -newer /app/last_backup -print0 | while IFS= read -r -d '' f; do
  mkdir -p "/app/incremental/$(dirname -- "$f")"
  cp -p -- "$f" "/app/incremental/$f"
done
touch /app/last_backup''',
        tags=["find", "cp"],
    ),
    Spec(
        task_id="extract-one-file",
        title="Restore a single file from an archive",
        difficulty="easy",
        category="backup-archive",
        instruction="""
/app/backups/project.tar.gz is a backup of a project. Restore only `project/config/app.ini` from it into
/app/restore (so the file ends up at /app/restore/project/config/app.ini), with the modification time the archive
records for it. Extract nothing else.
""",
        files=_project,
        steps=["RUN cd /app && touch -d '2026-02-03 04:05:06' project/config/app.ini && mkdir -p backups"
               " && tar -czf backups/project.tar.gz project && rm -rf project"],
        tests='''
import tarfile

RESTORED = Path("/app/restore/project/config/app.ini")


def test_content():
    assert RESTORED.read_text() == "[app]\\nname = demo\\n"


def test_nothing_else():
    assert RESTORED.read_text() == "[app]\\nname = demo\\n"
    files = [p for p in Path("/app/restore").rglob("*") if p.is_file() or p.is_symlink()]
    assert [str(p) for p in files] == [str(RESTORED)]


def test_modification_time_kept():
    with tarfile.open("/app/backups/project.tar.gz") as archive:
        recorded = archive.getmember("project/config/app.ini").mtime
    assert int(RESTORED.stat().st_mtime) == recorded


def test_archive_intact():
    with tarfile.open("/app/backups/project.tar.gz") as archive:
        assert sorted(m.name for m in archive.getmembers() if m.isfile()) == [
            "project/README.md", "project/config/app.ini", "project/src/main.py", "project/src/util.py"]
''',
        weights={"test_content": 1.5, "test_nothing_else": 1.0, "test_modification_time_kept": 1.0},
        guards=["test_archive_intact"],
        solution="mkdir -p /app/restore && tar -xzf /app/backups/project.tar.gz -C /app/restore project/config/app.ini",
        tags=["tar"],
        one_command=True,
    ),
    Spec(
        task_id="archive-with-checksums",
        title="Archive with a checksum manifest",
        difficulty="medium",
        category="backup-archive",
        instruction="""
Create /app/release.tar.gz containing the directory /app/project (members named `project/...`) and write
/app/SHA256SUMS with the sha256 of every file in it, in the format of `sha256sum` (`HASH  project/PATH`, two
spaces), sorted by path. `cd /app && sha256sum -c SHA256SUMS` must succeed.
""",
        files=_project,
        tests='''
import hashlib
import tarfile

FILES = ["project/README.md", "project/config/app.ini", "project/src/main.py", "project/src/util.py"]


def test_archive_members():
    with tarfile.open("/app/release.tar.gz") as archive:
        names = sorted(m.name.removeprefix("./") for m in archive.getmembers() if m.isfile())
    assert names == FILES


def test_manifest_verifies():
    result = run("sha256sum", "-c", "SHA256SUMS", cwd="/app")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(l.rsplit(": ", 1)[0] for l in result.stdout.splitlines() if l.endswith(": OK")) == FILES


def test_manifest_format_sorted():
    lines = Path("/app/SHA256SUMS").read_text().splitlines()
    expected = [hashlib.sha256(Path("/app", f).read_bytes()).hexdigest() + "  " + f for f in FILES]
    assert lines == expected
''',
        weights={"test_archive_members": 1.5, "test_manifest_verifies": 1.5, "test_manifest_format_sorted": 1.0},
        solution='''cd /app
tar -czf release.tar.gz project
find project -type f | LC_ALL=C sort | xargs -d '\\n' sha256sum > SHA256SUMS''',
        tags=["tar", "sha256sum"],
    ),
    Spec(
        task_id="prune-old-backups",
        title="Keep the three newest backups",
        difficulty="medium",
        category="backup-archive",
        instruction="""
/app/backups holds files named `backup-YYYY-MM-DD.tar.gz` (and a few other files). Delete all such backups
except the three with the latest dates in their names (the modification times are not reliable). Do not touch
other files.
""",
        files={
            "backups/backup-2026-01-15.tar.gz": "a",
            "backups/backup-2025-12-31.tar.gz": "b",
            "backups/backup-2026-02-01.tar.gz": "c",
            "backups/backup-2026-01-02.tar.gz": "d",
            "backups/backup-2026-03-09.tar.gz": "e",
            "backups/backup-2025-11-20.tar.gz": "f",
            "backups/README": "keep me",
            "backups/backup-notes.txt": "keep me too",
        },
        steps=["RUN cd /app/backups && touch -d '2026-03-10' backup-2025-11-20.tar.gz && touch -d '2026-01-01' backup-2026-03-09.tar.gz"],
        tests='''
def _names():
    return sorted(p.name for p in Path("/app/backups").iterdir())


def test_oldest_removed_despite_its_new_mtime():
    assert "backup-2025-11-20.tar.gz" not in _names()


def test_2025_12_31_removed():
    assert "backup-2025-12-31.tar.gz" not in _names()


def test_2026_01_02_removed():
    assert "backup-2026-01-02.tar.gz" not in _names()


def test_newest_and_other_files_kept():
    for name in ["backup-2026-01-15.tar.gz", "backup-2026-02-01.tar.gz", "backup-2026-03-09.tar.gz",
                 "README", "backup-notes.txt"]:
        assert unchanged("/app/backups/" + name), name
''',
        weights={"test_oldest_removed_despite_its_new_mtime": 1.0, "test_2025_12_31_removed": 1.0,
                 "test_2026_01_02_removed": 1.0},
        guards=["test_newest_and_other_files_kept"],
        solution="""cd /app/backups && ls backup-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].tar.gz | sort -r | tail -n +4 | xargs -r rm -f --""",
        tags=["bash", "rotation"],
        one_command=True,
    ),
    Spec(
        task_id="compress-old-logs",
        outputs=['logs/app.log.1.gz', 'logs/app.log.2.gz', 'logs/db.log.1.gz'],
        title="Compress rotated logs",
        difficulty="easy",
        category="backup-archive",
        instruction="""
In /app/logs, compress every rotated log (`*.log.1`, `*.log.2`, ...) with gzip, so `app.log.1` becomes
`app.log.1.gz` and the uncompressed file is gone. Leave the live logs (`*.log`) uncompressed and untouched.
""",
        files={
            "logs/app.log": "live app\n",
            "logs/app.log.1": "app one\n" * 50,
            "logs/app.log.2": "app two\n" * 50,
            "logs/db.log": "live db\n",
            "logs/db.log.1": "db one\n" * 50,
        },
        tests='''
import gzip

ROTATED = {"app.log.1": "app one\\n" * 50, "app.log.2": "app two\\n" * 50, "db.log.1": "db one\\n" * 50}


def _compressed(name):
    assert gzip.decompress(Path("/app/logs", name + ".gz").read_bytes()).decode() == ROTATED[name], name
    assert not Path("/app/logs", name).exists(), f"{name} is still there uncompressed"


def test_app_log_1():
    _compressed("app.log.1")


def test_app_log_2():
    _compressed("app.log.2")


def test_db_log_1():
    _compressed("db.log.1")


def test_live_logs_untouched():
    assert unchanged("/app/logs/app.log") and unchanged("/app/logs/db.log")
    assert not Path("/app/logs/app.log.gz").exists() and not Path("/app/logs/db.log.gz").exists()
''',
        weights={"test_app_log_1": 1.0, "test_app_log_2": 1.0, "test_db_log_1": 1.0},
        guards=["test_live_logs_untouched"],
        solution="gzip /app/logs/*.log.[0-9]*",
        tags=["gzip"],
        one_command=True,
    ),
]
