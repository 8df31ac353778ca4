"""Debugging shell scripts."""

from __future__ import annotations

from _spec import BASH_GUARD_NAME, Spec, bash_script_guard

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
        tests=r'''
import shutil

DOCS = ["plan.txt", "meeting notes.txt", "q1  report.md", "-draft.txt"]


def test_docs_unchanged():
    assert sorted(p.name for p in Path("/app/docs").iterdir()) == sorted(DOCS)
    assert all(unchanged(f"/app/docs/{d}") for d in DOCS)


def test_backups_made():
    for d in DOCS:
        assert Path("/app/backup", d + ".bak").read_bytes() == Path("/app/docs", d).read_bytes(), d


def _run_with_extra(names):
    shutil.rmtree("/app/backup", ignore_errors=True)
    for name in names:
        Path("/app/docs", name).write_text(f"content of {name}\n")
    try:
        result = run("bash", "/app/backup.sh")
        assert result.returncode == 0, result.stderr
        for name in DOCS + names:
            assert Path("/app/backup", name + ".bak").read_bytes() == Path("/app/docs", name).read_bytes(), name
        assert sorted(p.name for p in Path("/app/backup").iterdir()) == sorted(d + ".bak" for d in DOCS + names)
    finally:
        for name in names:
            Path("/app/docs", name).unlink()


def test_script_handles_new_spaced_names():
    _run_with_extra(["new  file.txt", " leading.txt", "tab\there.txt"])


def test_script_handles_dashes_and_globs():
    _run_with_extra(["-n", "*.txt", "[ab].md"])
''',
        weights={"test_backups_made": 1.0, "test_script_handles_new_spaced_names": 1.5, "test_script_handles_dashes_and_globs": 1.5},
        guards=["test_docs_unchanged"],
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
(it should print `start`, the line count of /app/input.txt, and `done`) without changing what it does: it stays
the same bash script.
""",
        files={"run.sh": _CRLF, "input.txt": "a\nb\nc\n"},
        steps=["RUN chmod +x /app/run.sh"],
        tests=r'''
def _with_input(text):
    original = Path("/app/input.txt").read_bytes()
    try:
        Path("/app/input.txt").write_text(text)
        return run("/app/run.sh")
    finally:
        Path("/app/input.txt").write_bytes(original)


def test_runs():
    import random

    count = random.randrange(4, 60)
    result = _with_input("".join(f"row {i}\n" for i in range(count)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["start", str(count), "done"], result.stdout


def _counts(text, count):
    result = _with_input(text)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["start", count, "done"], (text, result.stdout)


def test_counts_the_current_input():
    _counts("".join(f"line {i}\n" for i in range(17)), "17")
    _counts("", "0")


def test_counts_newlines_as_wc_does():
    _counts("x\ny\nno final newline", "2")


def test_guard_no_carriage_returns_left():
    data = Path("/app/run.sh").read_bytes()
    assert data.startswith(b"#!") and b"\r" not in data
''' + bash_script_guard("/app/run.sh"),
        weights={"test_runs": 1.0, "test_counts_the_current_input": 1.5, "test_counts_newlines_as_wc_does": 1.0},
        guards=["test_guard_no_carriage_returns_left", BASH_GUARD_NAME],
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
stop (no `all ok`) with a non-zero exit status; for readable files the output stays the same. Keep it a bash
script.
""",
        files={"check.sh": _CHECK, "a.txt": "1\n2\n", "b.txt": "x\n"},
        steps=["RUN chmod +x /app/check.sh"],
        tests=r'''
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


def test_directory_argument_fails(tmp_path):
    result = run("/app/check.sh", str(tmp_path), "/app/a.txt")
    assert result.returncode != 0 and "all ok" not in result.stdout and "/app/a.txt" not in result.stdout
''' + bash_script_guard("/app/check.sh"),
        weights={"test_missing_file_fails": 1.5, "test_stops_at_the_first_failure": 1.5, "test_directory_argument_fails": 1.0},
        guards=["test_good_files_unchanged_output", BASH_GUARD_NAME],
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
        tests=r'''
def _count_of(text):
    original = Path("/app/users.txt").read_bytes()
    try:
        Path("/app/users.txt").write_text(text)
        result = run("/app/count_admins.sh")
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()
    finally:
        Path("/app/users.txt").write_bytes(original)


def test_sample_count():
    result = run("/app/count_admins.sh")
    assert result.returncode == 0 and result.stdout.strip() == "4"


def test_last_line_without_newline():
    assert _count_of("admin:a\nuser:b\nadmin:c") == "2"
    assert _count_of("guest:x\nadmin:only") == "1"


def test_indented_lines_do_not_count():
    assert _count_of("admin:a\n  admin:b\n\tadmin:c\nadmin:d\n") == "2"
    assert _count_of("") == "0"


def test_guard_still_a_bash_script():
    """The prompt says to keep it a bash script: a stand-in in another language earns nothing."""
    text = Path("/app/count_admins.sh").read_text()
    assert text.split("\n", 1)[0] in ("#!/bin/bash", "#!/usr/bin/env bash")
    assert run("bash", "-n", "/app/count_admins.sh").returncode == 0
''',
        weights={"test_sample_count": 1.0, "test_last_line_without_newline": 1.5, "test_indented_lines_do_not_count": 1.5},
        guards=["test_guard_still_a_bash_script"],
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
        tests=r'''
def test_runs():
    result = run("/app/bin/tool")
    assert result.returncode == 0 and result.stdout.strip() == "tool version 1.2"


def test_executable_by_others():
    mode = stat.S_IMODE(os.stat("/app/bin/tool").st_mode)
    assert mode & 0o111 == 0o111 and mode & 0o444 == 0o444


def test_runs_as_another_user():
    result = subprocess.run(["/app/bin/tool"], capture_output=True, text=True, timeout=30, user=65534, group=65534,
                            extra_groups=[], cwd="/")
    assert result.returncode == 0 and result.stdout.strip() == "tool version 1.2", result.stderr


def test_not_world_writable_and_unchanged():
    mode = stat.S_IMODE(os.stat("/app/bin/tool").st_mode)
    assert not mode & 0o002 and unchanged("/app/bin/tool")
''',
        weights={"test_runs": 1.0, "test_executable_by_others": 1.0, "test_runs_as_another_user": 1.5},
        guards=["test_not_world_writable_and_unchanged"],
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
its integer arguments (`sum: 0` with none; negative numbers allowed). Keep it a bash script.
""",
        files={"sum.sh": _SUM},
        steps=["RUN chmod +x /app/sum.sh"],
        tests=r'''
def test_simple():
    import random

    assert run("/app/sum.sh", "1", "2", "3").stdout.strip() == "sum: 6"
    numbers = [random.randrange(1, 500) for _ in range(random.randrange(2, 7))]
    assert run("/app/sum.sh", *map(str, numbers)).stdout.strip() == f"sum: {sum(numbers)}"


def test_one_or_no_argument():
    assert run("/app/sum.sh", "42").stdout.strip() == "sum: 42"
    assert run("/app/sum.sh").stdout.strip() == "sum: 0"


def test_negative_and_large():
    assert run("/app/sum.sh", "-5", "100000", "7").stdout.strip() == "sum: 100002"
''' + bash_script_guard("/app/sum.sh"),
        weights={"test_simple": 1.5, "test_one_or_no_argument": 1.0, "test_negative_and_large": 1.0},
        guards=[BASH_GUARD_NAME],
        solution="""sed -i 's/total="$total+$n"/total=$((total + n))/' /app/sum.sh""",
        tags=["bash"],
        one_command=True,
    ),
    Spec(
        task_id="fix-log-rotation",
        title="Rotation keeps one file too few",
        difficulty="medium",
        category="debugging",
        instruction="""
`/app/rotate.sh DIR [KEEP]` should keep the KEEP newest `*.log` files of DIR (by modification time, default
2) and delete the older ones. It keeps one file too few and breaks on names with spaces. Fix it so it
behaves as described for any file names (also when DIR has fewer than KEEP logs) and leaves files that do not
end in `.log` alone. Keep it a bash script. /app/logs has sample files to try it on.
""",
        files={"rotate.sh": _ROTATE, "logs/readme.txt": "not a log\n"},
        steps=[
            "RUN chmod +x /app/rotate.sh && cd /app/logs"
            " && for i in 1 2 3 4 5; do echo $i > \"app $i.log\"; touch -d \"2026-01-0$i 12:00\" \"app $i.log\"; done"
        ],
        tests=r'''
def _names(d):
    return sorted(p.name for p in Path(d).iterdir())


def _make(tmp_path, names, extra=("keep.txt",)):
    d = tmp_path / "logs"
    d.mkdir()
    for i, name in enumerate(names, 1):
        f = d / name
        f.write_text(str(i))
        os.utime(f, (1_700_000_000 + i * 60, 1_700_000_000 + i * 60))
    for name in extra:
        (d / name).write_text("not a log")
        os.utime(d / name, (1_600_000_000, 1_600_000_000))
    return d


def test_default_keeps_two(tmp_path):
    d = _make(tmp_path, [f"svc {i}.log" for i in range(1, 6)])
    assert run("/app/rotate.sh", str(d)).returncode == 0
    assert _names(d) == ["keep.txt", "svc 4.log", "svc 5.log"]


def test_keep_three_with_odd_names(tmp_path):
    names = ["-old.log", "b  c.log", "*.log", "d[1].log", "e f.log", "newest.log"]
    d = _make(tmp_path, names, extra=("notes.log.txt", "log", "x.LOG"))
    assert run("/app/rotate.sh", str(d), "3").returncode == 0
    assert _names(d) == sorted(["d[1].log", "e f.log", "newest.log", "notes.log.txt", "log", "x.LOG"])


def test_exactly_or_fewer_than_keep(tmp_path):
    d = _make(tmp_path, ["a.log", "b.log", "c.log"])
    assert run("/app/rotate.sh", str(d), "3").returncode == 0
    assert _names(d) == ["a.log", "b.log", "c.log", "keep.txt"]
    (tmp_path / "second").mkdir()
    e = _make(tmp_path / "second", ["x.log", "y.log"])
    assert run("/app/rotate.sh", str(e), "4").returncode == 0
    assert _names(e) == ["keep.txt", "x.log", "y.log"]
    (tmp_path / "third").mkdir()  # one more than KEEP: only the oldest goes (deleting nothing earns nothing here)
    f = _make(tmp_path / "third", ["p.log", "q.log", "r.log", "s.log"])
    assert run("/app/rotate.sh", str(f), "3").returncode == 0
    assert _names(f) == ["keep.txt", "q.log", "r.log", "s.log"]
''' + bash_script_guard("/app/rotate.sh"),
        weights={"test_default_keeps_two": 1.5, "test_keep_three_with_odd_names": 1.5, "test_exactly_or_fewer_than_keep": 1.0},
        guards=[BASH_GUARD_NAME],
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
