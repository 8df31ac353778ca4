"""Debugging shell scripts."""

from __future__ import annotations

from _spec import Spec

_BACKUP = '''#!/bin/bash
# Copy every file of /app/docs into /app/backup, adding the suffix .bak
SRC=/app/docs
DST=/app/backup
mkdir -p $DST
for f in $(ls $SRC); do
  cp $SRC/$f $DST/$f.bak
done
'''

_CRLF = "#!/bin/bash\r\necho \"start\"\r\nwc -l < /app/input.txt\r\necho \"done\"\r\n"

_CHECK = '''#!/bin/bash
# Print the number of lines of each file given as argument, then "all ok".
# Must stop with a non-zero exit status as soon as a file cannot be read.
for f in "$@"; do
  lines=$(wc -l < "$f")
  echo "$f $lines"
done
echo "all ok"
'''

_COUNTER = '''#!/bin/bash
# Count the lines of /app/users.txt that start with "admin:" and print the count.
count=0
cat /app/users.txt | while read -r line; do
  case "$line" in
    admin:*) count=$((count + 1)) ;;
  esac
done
echo "$count"
'''

_TOOL = '''#!/bin/bash
echo "tool version 1.2"
'''

_SUM = '''#!/bin/bash
# Print the sum of the numbers given as arguments.
total=0
for n in "$@"; do
  total="$total+$n"
done
echo "sum: $total"
'''

_ROTATE = '''#!/bin/bash
# Keep the newest KEEP (default 2) files of DIR matching *.log; delete the older ones.
DIR=$1
KEEP=${2:-2}
cd $DIR
ls -t *.log | tail -n +$KEEP | xargs rm -f
'''

TASKS = [
    Spec(
        task_id="fix-backup-spaces",
        title="Backup script breaks on spaces",
        difficulty="medium",
        category="debugging",
        instruction="""
/app/backup.sh copies every file of /app/docs to /app/backup/NAME.bak. It breaks on file names that contain
spaces (and would on other special characters). Fix the script, then run it so that /app/backup holds a
`.bak` copy of each file of /app/docs. Leave /app/docs unchanged.
""",
        files={
            "backup.sh": _BACKUP,
            "docs/plan.txt": "plan\n",
            "docs/meeting notes.txt": "notes\n",
            "docs/q1  report.md": "two spaces\n",
            "docs/-draft.txt": "dash\n",
        },
        steps=["RUN chmod +x /app/backup.sh"],
        tests='''
import shutil

DOCS = ["plan.txt", "meeting notes.txt", "q1  report.md", "-draft.txt"]


def test_backups_exist():
    missing = [d for d in DOCS if not Path("/app/backup", d + ".bak").is_file()]
    assert not missing, missing


def test_backups_have_the_content():
    for d in DOCS:
        assert Path("/app/backup", d + ".bak").read_bytes() == Path("/app/docs", d).read_bytes(), d


def test_script_is_fixed(tmp_path):
    shutil.rmtree("/app/backup", ignore_errors=True)
    Path("/app/docs/new  file.txt").write_text("n\\n")
    try:
        result = run("bash", "/app/backup.sh")
        assert result.returncode == 0, result.stderr
        assert Path("/app/backup/new  file.txt.bak").read_text() == "n\\n"
        assert sorted(p.name for p in Path("/app/backup").iterdir()) == sorted(d + ".bak" for d in DOCS + ["new  file.txt"])
    finally:
        Path("/app/docs/new  file.txt").unlink()
''',
        weights={"test_backups_exist": 1.0, "test_backups_have_the_content": 1.0, "test_script_is_fixed": 2.0},
        solution='''cat > /app/backup.sh <<'EOF'
#!/bin/bash
# Copy every file of /app/docs into /app/backup, adding the suffix .bak
SRC=/app/docs
DST=/app/backup
mkdir -p "$DST"
for f in "$SRC"/*; do
  [ -f "$f" ] || continue
  cp -- "$f" "$DST/$(basename -- "$f").bak"
done
EOF
bash /app/backup.sh''',
        tags=["bash", "quoting"],
    ),
    Spec(
        task_id="fix-crlf-script",
        title="bad interpreter",
        difficulty="easy",
        category="debugging",
        instruction="""
Running `/app/run.sh` fails with a "bad interpreter" error. It was edited on another system. Make it run
(it should print `start`, the line count of /app/input.txt, and `done`) without changing what it does.
""",
        files={"run.sh": _CRLF, "input.txt": "a\nb\nc\n"},
        steps=["RUN chmod +x /app/run.sh"],
        tests='''
def test_runs():
    result = run("/app/run.sh")
    assert result.returncode == 0, result.stderr


def test_output():
    assert run("/app/run.sh").stdout.split() == ["start", "3", "done"]


def test_no_carriage_returns_left():
    assert b"\\r" not in Path("/app/run.sh").read_bytes()
''',
        weights={"test_runs": 1.5, "test_output": 1.5, "test_no_carriage_returns_left": 0.5},
        solution="sed -i 's/\\r$//' /app/run.sh",
        tags=["bash", "line-endings"],
        one_command=True,
    ),
    Spec(
        task_id="fix-exit-status",
        title="Script hides its failures",
        difficulty="medium",
        category="debugging",
        instruction="""
/app/check.sh prints `FILE LINES` for each file argument and then `all ok`. When a file cannot be read it
prints an error but still ends with `all ok` and exit status 0. Fix it: on the first unreadable file it must
stop (no `all ok`) with a non-zero exit status; for readable files the output stays the same.
""",
        files={"check.sh": _CHECK, "a.txt": "1\n2\n", "b.txt": "x\n"},
        steps=["RUN chmod +x /app/check.sh"],
        tests='''
def test_good_files_unchanged_output():
    result = run("/app/check.sh", "/app/a.txt", "/app/b.txt")
    assert result.returncode == 0
    assert result.stdout.splitlines() == ["/app/a.txt 2", "/app/b.txt 1", "all ok"]


def test_missing_file_fails():
    result = run("/app/check.sh", "/app/a.txt", "/app/nope.txt", "/app/b.txt")
    assert result.returncode != 0


def test_stops_at_the_first_failure():
    result = run("/app/check.sh", "/app/a.txt", "/app/nope.txt", "/app/b.txt")
    assert "all ok" not in result.stdout and "/app/b.txt" not in result.stdout
    assert result.stdout.splitlines()[:1] == ["/app/a.txt 2"]
''',
        weights={"test_good_files_unchanged_output": 1.0, "test_missing_file_fails": 1.5, "test_stops_at_the_first_failure": 1.5},
        solution="""sed -i 's|^  lines=$(wc -l < "$f")$|  lines=$(wc -l < "$f") \\|\\| exit 1|' /app/check.sh
grep -q 'exit 1' /app/check.sh""",
        tags=["bash", "exit-status"],
    ),
    Spec(
        task_id="fix-subshell-counter",
        title="The admin counter prints 0",
        difficulty="medium",
        category="debugging",
        instruction="""
/app/count_admins.sh should print how many lines of /app/users.txt start with `admin:`. It always prints 0.
Fix the script (keep it a bash script that reads /app/users.txt).
""",
        files={
            "count_admins.sh": _COUNTER,
            "users.txt": "admin:alice\nuser:bob\nadmin:carol\n  admin:not-at-start\nadmin:dave\nguest:eve\nadmin:frank",
        },
        steps=["RUN chmod +x /app/count_admins.sh"],
        tests='''
def test_runs():
    assert run("/app/count_admins.sh").returncode == 0


def test_count_includes_last_line_without_newline():
    assert run("/app/count_admins.sh").stdout.strip() == "4"


def test_other_input():
    original = Path("/app/users.txt").read_text()
    try:
        Path("/app/users.txt").write_text("admin:x\\nadmin:y\\n")
        assert run("/app/count_admins.sh").stdout.strip() == "2"
        Path("/app/users.txt").write_text("")
        assert run("/app/count_admins.sh").stdout.strip() == "0"
    finally:
        Path("/app/users.txt").write_text(original)
''',
        weights={"test_runs": 0.5, "test_count_includes_last_line_without_newline": 2.0, "test_other_input": 1.5},
        solution='''cat > /app/count_admins.sh <<'EOF'
#!/bin/bash
# Count the lines of /app/users.txt that start with "admin:" and print the count.
count=0
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    admin:*) count=$((count + 1)) ;;
  esac
done < /app/users.txt
echo "$count"
EOF''',
        tags=["bash", "subshell"],
    ),
    Spec(
        task_id="make-tool-runnable",
        title="Permission denied",
        difficulty="easy",
        category="debugging",
        instruction="""
`/app/bin/tool` fails with "Permission denied". Make it runnable by every user (keep it readable and not
writable by others), without changing its content.
""",
        files={"bin/tool": _TOOL},
        steps=["RUN chmod 644 /app/bin/tool"],
        tests='''
def test_runs():
    result = run("/app/bin/tool")
    assert result.returncode == 0 and result.stdout.strip() == "tool version 1.2"


def test_executable_by_others():
    mode = stat.S_IMODE(os.stat("/app/bin/tool").st_mode)
    assert mode & 0o111 == 0o111 and mode & 0o444 == 0o444


def test_not_world_writable_and_unchanged():
    mode = stat.S_IMODE(os.stat("/app/bin/tool").st_mode)
    assert not mode & 0o002 and unchanged("/app/bin/tool")
''',
        weights={"test_runs": 1.5, "test_executable_by_others": 1.0, "test_not_world_writable_and_unchanged": 0.5},
        solution="chmod 755 /app/bin/tool",
        tags=["chmod"],
        one_command=True,
    ),
    Spec(
        task_id="fix-bash-arithmetic",
        title="sum prints a formula",
        difficulty="easy",
        category="debugging",
        instruction="""
`/app/sum.sh 1 2 3` should print `sum: 6` but prints `sum: 0+1+2+3`. Fix the script so it prints the sum of
its integer arguments (`sum: 0` with none; negative numbers allowed).
""",
        files={"sum.sh": _SUM},
        steps=["RUN chmod +x /app/sum.sh"],
        tests='''
def test_simple():
    assert run("/app/sum.sh", "1", "2", "3").stdout.strip() == "sum: 6"


def test_no_arguments():
    assert run("/app/sum.sh").stdout.strip() == "sum: 0"


def test_negative_and_large():
    assert run("/app/sum.sh", "-5", "100000", "7").stdout.strip() == "sum: 100002"
''',
        weights={"test_simple": 2.0, "test_no_arguments": 0.5, "test_negative_and_large": 1.0},
        solution="""sed -i 's/total="$total+$n"/total=$((total + n))/' /app/sum.sh""",
        tags=["bash"],
        one_command=True,
    ),
    Spec(
        task_id="fix-log-rotation",
        title="Rotation keeps one file too few",
        difficulty="hard",
        category="debugging",
        instruction="""
`/app/rotate.sh DIR [KEEP]` should keep the KEEP newest `*.log` files of DIR (by modification time, default
2) and delete the older ones. It keeps one file too few and breaks on names with spaces. Fix it so it
behaves as described for any file names (also when DIR has fewer than KEEP logs) and leaves files that do not
end in `.log` alone. /app/logs has sample files.
""",
        files={"rotate.sh": _ROTATE, "logs/readme.txt": "not a log\n"},
        steps=[
            "RUN chmod +x /app/rotate.sh && cd /app/logs"
            " && for i in 1 2 3 4 5; do echo $i > \"app $i.log\"; touch -d \"2026-01-0$i 12:00\" \"app $i.log\"; done"
        ],
        tests='''
def _names(d):
    return sorted(p.name for p in Path(d).iterdir())


def _make(tmp_path, n):
    d = tmp_path / "logs"
    d.mkdir()
    for i in range(1, n + 1):
        f = d / f"svc {i}.log"
        f.write_text(str(i))
        os.utime(f, (1_700_000_000 + i * 60, 1_700_000_000 + i * 60))
    (d / "keep.txt").write_text("k")
    return d


def test_default_keeps_two(tmp_path):
    d = _make(tmp_path, 5)
    assert run("/app/rotate.sh", str(d)).returncode == 0
    assert _names(d) == ["keep.txt", "svc 4.log", "svc 5.log"]


def test_keep_three_on_the_samples():
    assert run("/app/rotate.sh", "/app/logs", "3").returncode == 0
    assert _names("/app/logs") == ["app 3.log", "app 4.log", "app 5.log", "readme.txt"]


def test_fewer_files_than_keep(tmp_path):
    d = _make(tmp_path, 2)
    assert run("/app/rotate.sh", str(d), "4").returncode == 0
    assert _names(d) == ["keep.txt", "svc 1.log", "svc 2.log"]
''',
        weights={"test_default_keeps_two": 1.5, "test_keep_three_on_the_samples": 1.5, "test_fewer_files_than_keep": 1.0},
        solution='''cat > /app/rotate.sh <<'EOF'
#!/bin/bash
# Keep the newest KEEP (default 2) files of DIR matching *.log; delete the older ones.
DIR=$1
KEEP=${2:-2}
cd "$DIR" || exit 1
find . -maxdepth 1 -type f -name '*.log' -printf '%T@ %P\\0' | sort -z -rn | tail -z -n +$((KEEP + 1)) |
  while IFS= read -r -d '' entry; do rm -f -- "${entry#* }"; done
EOF''',
        tags=["bash", "find"],
    ),
]
