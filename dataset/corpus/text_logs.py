"""Text and log processing."""

from __future__ import annotations

import random
import re
from collections import Counter

from _spec import Spec

_rng = random.Random(101)

# --- errors per hour -------------------------------------------------------------------------
_levels = ["INFO"] * 6 + ["WARN"] * 2 + ["ERROR"] * 2
_service_log = []
for _i in range(400):
    _hour = sorted(_rng.randrange(24) for _ in range(1))[0]
    _level = _rng.choice(_levels)
    _service_log.append(f"2026-04-03 {_hour:02d}:{_rng.randrange(60):02d}:{_rng.randrange(60):02d} [{_level}] svc: event {_i}")
_service_log.sort()
_service_log.insert(57, "2026-04-03 07:00:00 [INFO] svc: message mentions [ERROR] in its text")
_per_hour = Counter(line[11:13] for line in _service_log if " [ERROR] " in line[19:28])
_errors_per_hour = [f"{hour} {count}" for hour, count in sorted(_per_hour.items())]

# --- emails -----------------------------------------------------------------------------------
_people = ["ana.silva", "bo", "chen_wei", "dara-k", "emil", "fatima.z", "gio", "hugo99"]
_domains = ["example.org", "mail.example.com", "uni.example.edu"]
_mail_lines = []
_emails = set()
for _i in range(60):
    _addr = f"{_rng.choice(_people)}@{_rng.choice(_domains)}"
    _emails.add(_addr)
    _mail_lines.append(_rng.choice([
        f"From: <{_addr}> subject: report {_i}",
        f"cc {_addr}, please review",
        f"reply-to={_addr};",
        f"note {_i}: nothing here @ all",
    ]).replace("nothing here @ all", "nothing here @ all" if _i % 2 else "ping @team"))
_emails = {e for e in _emails if any(e in line for line in _mail_lines)}

# --- top ips --------------------------------------------------------------------------------
_ips = [f"192.0.2.{n}" for n in (7, 15, 23, 42, 88, 101)]
_weights = [30, 22, 17, 9, 5, 2]
_access = []
for _ip, _w in zip(_ips, _weights):
    _access += [_ip] * _w
_rng.shuffle(_access)
_access_log = "".join(f'{ip} - - [03/Apr/2026:10:{i % 60:02d}:00 +0000] "GET /p/{i} HTTP/1.1" 200 {100 + i}\n' for i, ip in enumerate(_access))

# --- slow requests ----------------------------------------------------------------------------
_req_lines = []
for _i in range(120):
    _ms = _rng.choice([_rng.randrange(5, 400), _rng.randrange(400, 3000)])
    _req_lines.append(f"req id={_i:04d} path=/api/{_rng.choice(['a', 'b', 'c'])} took={_ms}ms status=200")
_req_lines.insert(40, "req id=9999 path=/api/x took=500ms status=200")
_slow = [line for line in _req_lines if int(re.search(r"took=(\d+)ms", line).group(1)) > 500]

# --- exceptions in a log with stack traces ---------------------------------------------------
_exc_types = ["java.io.IOException", "java.lang.NullPointerException", "com.acme.QuotaExceeded", "java.util.ConcurrentModificationException"]
_app_log = []
_exc_counts: Counter[str] = Counter()
for _i in range(70):
    if _rng.random() < 0.45:
        _t = _rng.choices(_exc_types, weights=[5, 3, 2, 1])[0]
        _exc_counts[_t] += 1
        _app_log.append(f"2026-04-03T10:{_i % 60:02d}:00 ERROR worker-{_i % 4} Unhandled exception")
        _app_log.append(f"{_t}: failure number {_i}")
        _app_log.append("\tat com.acme.Worker.run(Worker.java:42)")
        if _rng.random() < 0.5:
            _cause = _rng.choice(_exc_types)
            _app_log.append(f"Caused by: {_cause}: nested")
            _app_log.append("\tat com.acme.Io.read(Io.java:7)")
    else:
        _app_log.append(f"2026-04-03T10:{_i % 60:02d}:00 INFO worker-{_i % 4} ok {_i}")
_exc_report = [f"{count} {name}" for name, count in sorted(_exc_counts.items(), key=lambda kv: (-kv[1], kv[0]))]

# --- merge logs -------------------------------------------------------------------------------
_a = sorted(f"2026-04-03T{_rng.randrange(24):02d}:{_rng.randrange(60):02d}:{_rng.randrange(60):02d}Z web {n}" for n in range(25))
_b = sorted(f"2026-04-03T{_rng.randrange(24):02d}:{_rng.randrange(60):02d}:{_rng.randrange(60):02d}Z db {n}" for n in range(25))
_merged = sorted(_a + _b, key=lambda line: line[:20])
assert len({line[:20] for line in _merged}) == len(_merged), "the merge must have one right order"

# --- python line counts -----------------------------------------------------------------------
_src = {
    "src/app/__init__.py": "",
    "src/app/main.py": "import sys\n\n\ndef main():\n    print(sys.argv)\n\n\nmain()\n",
    "src/app/util/strings.py": "def shout(text):\n    return text.upper()\n",
    "src/app/util/more strings.py": "def whisper(text):\n    return text.lower()\n\n\n# end\n",
    "src/README.md": "# not python\nline\nline\n",
    "src/app/data.json": "{}\n",
}
_py_lines = sum(text.count("\n") for path, text in _src.items() if path.endswith(".py"))
_py_per_file = sorted(((text.count("\n"), path[len("src/"):]) for path, text in _src.items() if path.endswith(".py")),
                      key=lambda entry: entry[1].encode())

TASKS = [
    Spec(
        task_id="log-errors-per-hour",
        title="Count ERROR entries per hour",
        difficulty="medium",
        category="text-processing",
        instruction="""
/app/service.log has one entry per line: `YYYY-MM-DD HH:MM:SS [LEVEL] source: message`.
Count the entries whose level is ERROR, per hour of the day. Write /app/errors_per_hour.txt with one
line `HH COUNT` per hour that has at least one ERROR (two-digit hour, then a space, then the count),
sorted by hour. A message that merely contains the text "[ERROR]" is not an ERROR entry.
""",
        files={"service.log": "\n".join(_service_log) + "\n"},
        tests=f'''
EXPECTED = {_errors_per_hour!r}


def _lines():
    return Path("/app/errors_per_hour.txt").read_text().splitlines()


def test_format():
    lines = _lines()
    assert lines and all(len(l.split()) == 2 and len(l.split()[0]) == 2 for l in lines)


def test_hours_present():
    assert [l.split()[0] for l in _lines()] == [e.split()[0] for e in EXPECTED]


def test_counts_exact():
    assert _lines() == EXPECTED


def test_log_unchanged():
    assert unchanged("/app/service.log")
''',
        weights={"test_format": 0.5, "test_hours_present": 1.0, "test_counts_exact": 2.0},
        guards=["test_log_unchanged"],
        solution="""awk '$3 == "[ERROR]" {print substr($2, 1, 2)}' /app/service.log | sort | uniq -c | awk '{print $2, $1}' > /app/errors_per_hour.txt""",
        tags=["awk", "logs"],
        one_command=True,
    ),
    Spec(
        task_id="extract-unique-emails",
        title="Extract the e-mail addresses",
        difficulty="easy",
        category="text-processing",
        instruction="""
Extract every e-mail address that appears in /app/mail.txt and write them to /app/emails.txt, one per
line, without duplicates, sorted in byte order (`LC_ALL=C sort`). An address is `local@domain`, where
the local part has letters, digits, dots, underscores or hyphens and the domain has letters, digits,
dots and hyphens.
""",
        files={"mail.txt": "\n".join(_mail_lines) + "\n"},
        tests=f'''
EXPECTED = {sorted(_emails)!r}


def _got():
    return Path("/app/emails.txt").read_text().splitlines()


def test_every_address_found():
    assert set(EXPECTED) <= set(_got())


def test_no_junk_or_duplicates():
    got = _got()
    assert got and len(got) == len(set(got)) and set(got) <= set(EXPECTED)


def test_sorted():
    assert _got() == EXPECTED
''',
        weights={"test_every_address_found": 2.0, "test_no_junk_or_duplicates": 1.0, "test_sorted": 1.0},
        solution="grep -oE '[A-Za-z0-9._-]+@[A-Za-z0-9.-]+[A-Za-z0-9]' /app/mail.txt | LC_ALL=C sort -u > /app/emails.txt",
        tags=["grep", "regex"],
        one_command=True,
    ),
    Spec(
        task_id="top-client-ips",
        title="Top three client addresses",
        difficulty="easy",
        category="text-processing",
        instruction="""
/app/access.log is a web server access log; the first field of each line is the client IP address.
Write the three addresses with the most requests to /app/top3.txt as `COUNT IP` lines, most requests first.
""",
        files={"access.log": _access_log},
        tests=f'''
EXPECTED = {[f"{w} {ip}" for ip, w in zip(_ips[:3], _weights[:3])]!r}


def _pairs():
    return [line.split() for line in Path("/app/top3.txt").read_text().splitlines() if line.strip()]


def test_three_lines():
    pairs = _pairs()
    assert len(pairs) == 3 and all(len(p) == 2 and p[0].isdigit() for p in pairs)
    assert set(p[1] for p in pairs) <= set(line.split()[0] for line in Path("/app/access.log").read_text().splitlines())


def test_busiest_first():
    assert " ".join(_pairs()[0]) == EXPECTED[0]


def test_all_three():
    assert [" ".join(p) for p in _pairs()] == EXPECTED
''',
        weights={"test_three_lines": 0.5, "test_busiest_first": 1.0, "test_all_three": 2.0},
        solution="cut -d' ' -f1 /app/access.log | sort | uniq -c | sort -rn | head -n 3 | awk '{print $1, $2}' > /app/top3.txt",
        tags=["sort", "uniq"],
        one_command=True,
    ),
    Spec(
        task_id="slow-requests",
        title="Find the slow requests",
        difficulty="easy",
        category="text-processing",
        instruction="""
Each line of /app/requests.log has a field `took=NNNms`. Write every line whose duration is strictly
greater than 500 ms to /app/slow.log, in the original order, unchanged.
""",
        files={"requests.log": "\n".join(_req_lines) + "\n"},
        tests=f'''
EXPECTED = {_slow!r}


def _got():
    return Path("/app/slow.log").read_text().splitlines()


def test_all_slow_lines_found():
    got = _got()
    assert set(EXPECTED) <= set(got)
    # something was filtered: a copy of the log (every slow line, and every fast one) earns nothing
    lines = Path("/app/requests.log").read_text().splitlines()
    assert len(set(got) - set(EXPECTED)) <= (len(lines) - len(EXPECTED)) // 2


def test_no_fast_line():
    got = _got()
    assert got and set(got) <= set(EXPECTED)


def test_order_and_exact_500_excluded():
    assert _got() == EXPECTED
''',
        weights={"test_all_slow_lines_found": 1.5, "test_no_fast_line": 1.5, "test_order_and_exact_500_excluded": 1.0},
        solution="""awk 'match($0, /took=[0-9]+ms/) { ms = substr($0, RSTART + 5, RLENGTH - 7) + 0; if (ms > 500) print }' /app/requests.log > /app/slow.log""",
        tags=["awk"],
        one_command=True,
    ),
    Spec(
        task_id="exception-report",
        title="Report the exception types of a log",
        difficulty="medium",
        category="text-processing",
        instruction="""
/app/app.log is an application log. When a request fails, an `ERROR ... Unhandled exception` line is
followed by the exception line (`fully.qualified.Type: message`), then stack-trace lines starting with a
tab, and possibly `Caused by: Type: message` lines with their own traces.

Count the *top-level* exceptions per type (the line right after each ERROR line; ignore `Caused by`).
Write /app/exceptions.txt with lines `COUNT TYPE`, most frequent first, ties broken by type name.
""",
        files={"app.log": "\n".join(_app_log) + "\n"},
        tests=f'''
EXPECTED = {_exc_report!r}


def _got():
    return [l for l in Path("/app/exceptions.txt").read_text().splitlines() if l.strip()]


def test_types_found():
    assert sorted(l.split()[1] for l in _got()) == sorted(e.split()[1] for e in EXPECTED)


def test_counts_right():
    assert sorted(_got()) == sorted(EXPECTED)


def test_order():
    assert _got() == EXPECTED
''',
        weights={"test_types_found": 1.0, "test_counts_right": 2.0, "test_order": 1.0},
        solution="""awk '/Unhandled exception$/ {getline; sub(/:.*/, ""); print}' /app/app.log | sort | uniq -c | sort -k1,1nr -k2,2 | awk '{print $1, $2}' > /app/exceptions.txt""",
        tags=["awk", "logs"],
    ),
    Spec(
        task_id="merge-two-logs",
        title="Merge two logs by time",
        difficulty="medium",
        category="text-processing",
        instruction="""
/app/logs/web.log and /app/logs/db.log are each sorted by their leading ISO timestamp. Merge them into
/app/logs/all.log, sorted by timestamp, keeping every line unchanged. Leave the two inputs as they are.
""",
        files={"logs/web.log": "\n".join(_a) + "\n", "logs/db.log": "\n".join(_b) + "\n"},
        tests=f'''
EXPECTED = {_merged!r}


def _got():
    return Path("/app/logs/all.log").read_text().splitlines()


def test_all_lines_present():
    assert sorted(_got()) == sorted(EXPECTED)


def test_sorted_by_time():
    got = _got()
    assert got and set(got) <= set(EXPECTED), "lines that are in neither input"
    assert set(l.split()[1] for l in got) == set(["web", "db"]), "lines of both inputs"
    assert [l[:20] for l in got] == sorted(l[:20] for l in got)


def test_exact_merge():
    assert _got() == EXPECTED


def test_inputs_unchanged():
    assert unchanged("/app/logs/web.log") and unchanged("/app/logs/db.log")
''',
        weights={"test_all_lines_present": 1.5, "test_sorted_by_time": 1.0, "test_exact_merge": 1.0},
        guards=["test_inputs_unchanged"],
        solution="sort -m -k1,1 /app/logs/web.log /app/logs/db.log > /app/logs/all.log",
        tags=["sort"],
        one_command=True,
    ),
    Spec(
        task_id="count-python-lines",
        title="Count the lines of Python code",
        difficulty="easy",
        category="text-processing",
        instruction="""
How many lines do the Python files (`*.py`) under /app/src have, subdirectories included? Count newline
characters, as `wc -l` does. Write /app/per_file.txt with one line `LINES PATH` per Python file (PATH relative
to /app/src, e.g. `app/main.py`), sorted by path in byte order (`LC_ALL=C sort`), and write the total number
of lines alone to /app/answer.txt. Careful: one file name contains a space. Leave /app/src as it is.
""",
        files=_src,
        tests=f'''
PER_FILE = {_py_per_file!r}


def _answer():
    return Path("/app/answer.txt").read_text().strip()


def _per_file():
    return [l for l in Path("/app/per_file.txt").read_text().splitlines() if l.strip()]


def test_total():
    assert int(_answer()) == {_py_lines}


def test_every_python_file_listed():
    paths = [l.split(" ", 1)[1] for l in _per_file()]
    assert paths and sorted(paths) == sorted(p for _, p in PER_FILE)


def test_per_file_counts_in_order():
    assert _per_file() == [f"{{n}} {{p}}" for n, p in PER_FILE]


def test_sources_unchanged():
    assert all(unchanged(p) for p in ORIGINAL_SHA256)
''',
        weights={"test_total": 2.0, "test_every_python_file_listed": 1.0, "test_per_file_counts_in_order": 1.0},
        guards=["test_sources_unchanged"],
        solution="""cd /app/src && find . -type f -name '*.py' -printf '%P\\0' | LC_ALL=C sort -z |
  while IFS= read -r -d '' f; do printf '%s %s\\n' "$(wc -l < "$f")" "$f"; done > /app/per_file.txt
awk '{s += $1} END {print s + 0}' /app/per_file.txt > /app/answer.txt""",
        tags=["find", "wc"],
    ),
]
