"""The four original sample tasks, rewritten as sources (they replace their hand-kept CSV rows)."""

from __future__ import annotations


from _spec import Spec

_STATS = '''#!/usr/bin/env python3
"""Print the mean and the maximum of the numbers in a file, one number per line."""
import sys


def read_numbers(path):
    numbers = []
    with open(path) as handle:
        lines = handle.readlines()
    for line in lines[1:]:
        numbers.append(float(line))
    return numbers


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/app/numbers.txt"
    numbers = read_numbers(path)
    mean = sum(numbers) / len(numbers)
    print(f"mean={mean:.2f}")
    print(f"max={max(numbers):.2f}")


if __name__ == "__main__":
    main()
'''

_SERVER_LOG = """\
2026-11-02T08:00:01 INFO  api      service started on port 8080
2026-11-02T08:00:05 INFO  db       connection pool ready (8 connections)
2026-11-02T08:01:17 WARN  api      slow request /orders took 1840 ms
2026-11-02T08:02:03 ERROR db       E1042 deadlock detected on table orders
2026-11-02T08:02:04 INFO  db       retrying transaction after ERROR E1042
2026-11-02T08:03:30 DEBUG cache    evicted 120 keys
2026-11-02T08:04:12 ERROR api      E2001 upstream timeout calling payments
2026-11-02T08:04:13 WARN  api      circuit breaker half-open for payments
2026-11-02T08:05:00 INFO  api      health check ok
2026-11-02T08:06:41 ERROR auth     E3100 invalid token signature for user 4411
2026-11-02T08:06:59 ERROR api      E2001 upstream timeout calling payments
2026-11-02T08:07:20 INFO  cache    warmed 2048 keys
2026-11-02T08:08:08 WARN  db       replica lag 12 s
2026-11-02T08:09:45 ERROR db       E1042 deadlock detected on table invoices
2026-11-02T08:10:00 INFO  api      health check ok
2026-11-02T08:10:31 DEBUG api      request id 7f3a payload size 512 B
2026-11-02T08:11:02 ERROR worker   E0007 job 991 failed: disk quota exceeded
2026-11-02T08:12:12 INFO  worker   job 992 finished in 3.1 s
2026-11-02T08:13:44 WARN  auth     3 failed logins for user 4411 (last code E3100)
2026-11-02T08:15:00 INFO  api      health check ok
"""

_EMPLOYEES = """\
name,department,salary,start_date
Amélie Laurent,Engineering,72000,2021-03-01
Bob Stone,Sales,51000,2019-07-15
Chen Wei,Engineering,81000,2018-01-09
"Doe, Jane",Sales,56500,2022-11-30
Émile Zola,Support,43000,2020-05-04
Farah Khan,Engineering,69500,2023-02-20
Grace Hopper,Support,47000,2017-09-12
"""

_DEPARTMENTS = {
    "Engineering": {"count": 3, "total_salary": 222500, "employees": ["Amélie Laurent", "Chen Wei", "Farah Khan"]},
    "Sales": {"count": 2, "total_salary": 107500, "employees": ["Bob Stone", "Doe, Jane"]},
    "Support": {"count": 2, "total_salary": 90000, "employees": ["Grace Hopper", "Émile Zola"]},
}

TASKS = [
    Spec(
        task_id="fix-stats-script",
        title="Fix the mean/max script",
        difficulty="easy",
        category="debugging",
        instruction="""
The script /app/stats.py should print the mean and the maximum of all numbers in a text file (one number per
line; blank lines are ignored). It reads the file given as its first argument, or /app/numbers.txt when there is
none, and prints exactly two lines:

    mean=<mean with two decimals>
    max=<maximum with two decimals>

Right now it gives wrong results or crashes. Fix the bug(s) in /app/stats.py. Keep the output format and do not
modify /app/numbers.txt.
""",
        files={"stats.py": _STATS, "numbers.txt": "42\n7\n3\n\n20\n8\n"},
        tests='''
def run_stats(*args):
    return run("python3", "/app/stats.py", *args, timeout=30)


def test_default_file_mean():
    result = run_stats()
    assert result.returncode == 0, result.stderr
    assert "mean=16.00" in result.stdout.splitlines()


def test_default_file_max():
    result = run_stats()
    assert result.returncode == 0, result.stderr
    assert "max=42.00" in result.stdout.splitlines()


def test_other_file(tmp_path):
    data = tmp_path / "values.txt"
    data.write_text("5\\n\\n1.5\\n-2\\n\\n")
    result = run_stats(str(data))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["mean=1.50", "max=5.00"]


def test_input_file_unchanged():
    assert unchanged("/app/numbers.txt")
''',
        weights={"test_default_file_mean": 1.0, "test_default_file_max": 1.0, "test_other_file": 2.0},
        guards=["test_input_file_unchanged"],
        solution='''# Read every line (the first one was skipped) and ignore blank lines (they crashed float()).
set -e
python3 - <<'EOF'
from pathlib import Path

path = Path("/app/stats.py")
source = path.read_text()
source = source.replace(
    "    for line in lines[1:]:\\n        numbers.append(float(line))\\n",
    "    for line in lines:\\n        if line.strip():\\n            numbers.append(float(line))\\n",
)
path.write_text(source)
EOF
python3 /app/stats.py''',
        tags=["python", "debugging", "bugfix"],
    ),
    Spec(
        task_id="count-log-levels",
        title="Summarise a server log",
        difficulty="easy",
        category="text-processing",
        instruction="""
/app/logs/server.log is a server log. Each line is: a timestamp, a level (DEBUG, INFO, WARN or ERROR), a
component and a message, separated by spaces.

1. Write /app/report.txt with one line `LEVEL COUNT` per level that occurs in the log (the level of the line,
   not words inside messages), sorted by count from high to low, ties by level name.
2. Write /app/errors.txt with the distinct error codes (the first word of the message, like E1042) of the ERROR
   lines, sorted, one per line.
""",
        files={"logs/server.log": _SERVER_LOG},
        tests='''
REPORT = Path("/app/report.txt")
ERRORS = Path("/app/errors.txt")
EXPECTED_REPORT = ["INFO 8", "ERROR 6", "WARN 4", "DEBUG 2"]
EXPECTED_CODES = ["E0007", "E1042", "E2001", "E3100"]


def report_lines():
    return [line.strip() for line in REPORT.read_text().splitlines() if line.strip()]


def test_report_format():
    lines = report_lines()
    assert lines, "report.txt is empty"
    for line in lines:
        level, count = line.split(" ")
        assert level in ("DEBUG", "INFO", "WARN", "ERROR") and count.isdigit(), line


def test_report_counts():
    assert sorted(report_lines()) == sorted(EXPECTED_REPORT)


def test_report_order():
    assert report_lines() == EXPECTED_REPORT


def test_error_codes():
    lines = [line.strip() for line in ERRORS.read_text().splitlines() if line.strip()]
    assert lines == EXPECTED_CODES


def test_log_unchanged():
    assert unchanged("/app/logs/server.log")
''',
        weights={"test_report_format": 1.0, "test_report_counts": 2.0, "test_report_order": 1.0, "test_error_codes": 2.0},
        guards=["test_log_unchanged"],
        solution='''set -e
cd /app
awk '{print $2}' logs/server.log | sort | uniq -c | awk '{print $2, $1}' | sort -k2,2nr -k1,1 > report.txt
awk '$2 == "ERROR" {print $4}' logs/server.log | sort -u > errors.txt
cat report.txt errors.txt''',
        tags=["logs", "awk", "grep", "text-processing"],
    ),
    Spec(
        task_id="make-project-tree",
        held_out=True,
        outputs=['project/README.md', 'project/bin/run.sh', 'project/config/settings.ini'],
        title="Create a project skeleton with permissions",
        difficulty="easy",
        category="file-operations",
        instruction="""
Create this project under /app/project:

- README.md containing exactly the line `# Demo project`
- bin/run.sh, a /bin/sh script that prints exactly `running on port 8080`; mode 755
- config/settings.ini with exactly these three lines, mode 600:
      [server]
      port = 8080
      debug = false
- an empty directory logs/ with mode 700

Every file ends with a newline.
""",
        tests='''
ROOT = Path("/app/project")


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_readme():
    assert (ROOT / "README.md").read_text() == "# Demo project\\n"


def test_settings_content_and_mode():
    path = ROOT / "config/settings.ini"
    assert path.read_text() == "[server]\\nport = 8080\\ndebug = false\\n"
    assert mode(path) == 0o600


def test_run_script():
    path = ROOT / "bin/run.sh"
    assert mode(path) == 0o755
    assert path.read_text().startswith("#!/bin/sh")
    result = run(str(path), timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "running on port 8080\\n"


def test_logs_directory():
    logs = ROOT / "logs"
    assert logs.is_dir() and list(logs.iterdir()) == []
    assert mode(logs) == 0o700
''',
        weights={"test_readme": 1.0, "test_settings_content_and_mode": 1.5, "test_run_script": 1.5,
                 "test_logs_directory": 1.0},
        solution='''set -e
mkdir -p /app/project/bin /app/project/config /app/project/logs
cd /app/project
printf '# Demo project\\n' > README.md
printf '#!/bin/sh\\necho "running on port 8080"\\n' > bin/run.sh
printf '[server]\\nport = 8080\\ndebug = false\\n' > config/settings.ini
chmod 755 bin/run.sh
chmod 600 config/settings.ini
chmod 700 logs
ls -lR /app/project''',
        tags=["filesystem", "permissions", "shell"],
    ),
    Spec(
        task_id="csv-to-json-summary",
        title="Summarise a CSV as JSON",
        difficulty="easy",
        category="data-processing",
        instruction="""
/app/data/employees.csv lists employees (columns name, department, salary, start_date; fields may be quoted and
names contain non-ASCII letters). Write /app/output/departments.json: one JSON object with a key per department,
each mapping to an object with

- "count": the number of employees,
- "total_salary": the sum of their salaries as an integer,
- "employees": their names, sorted alphabetically (Python string order), exactly as in the CSV.

Use Python (python3 is installed); write the file as UTF-8.
""",
        files={"data/employees.csv": _EMPLOYEES},
        tests=f'''
OUTPUT = Path("/app/output/departments.json")
EXPECTED = {_DEPARTMENTS!r}


def load():
    return json.loads(OUTPUT.read_text(encoding="utf-8"))


def test_valid_json_object():
    data = load()
    assert isinstance(data, dict)
    assert sorted(data) == sorted(EXPECTED)


def test_counts():
    data = load()
    assert {{name: entry["count"] for name, entry in data.items()}} == {{
        name: entry["count"] for name, entry in EXPECTED.items()
    }}


def test_total_salaries():
    data = load()
    for name, entry in EXPECTED.items():
        assert data[name]["total_salary"] == entry["total_salary"], name
        assert isinstance(data[name]["total_salary"], int), "total_salary must be an integer"


def test_employee_lists():
    data = load()
    for name, entry in EXPECTED.items():
        assert data[name]["employees"] == entry["employees"], name


def test_csv_unchanged():
    assert unchanged("/app/data/employees.csv")
''',
        weights={"test_valid_json_object": 1.0, "test_counts": 1.0, "test_total_salaries": 1.5, "test_employee_lists": 1.5},
        guards=["test_csv_unchanged"],
        solution='''set -e
mkdir -p /app/output
python3 - <<'EOF'
import csv
import json

departments = {}
with open("/app/data/employees.csv", newline="", encoding="utf-8") as handle:
    for row in csv.DictReader(handle):
        entry = departments.setdefault(row["department"], {"count": 0, "total_salary": 0, "employees": []})
        entry["count"] += 1
        entry["total_salary"] += int(row["salary"])
        entry["employees"].append(row["name"])
for entry in departments.values():
    entry["employees"].sort()
with open("/app/output/departments.json", "w", encoding="utf-8") as handle:
    json.dump(departments, handle, ensure_ascii=False, indent=2)
EOF
cat /app/output/departments.json''',
        tags=["python", "csv", "json"],
    ),
]
