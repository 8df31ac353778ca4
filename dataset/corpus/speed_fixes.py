"""Performance fixes with a measured threshold: the programs are correct but far too slow on the inputs the
tests generate. Every test times a fresh, larger input (generous limits: graders may run on two slow cores)
and checks the result against a reference computed in the test."""

from __future__ import annotations

from _spec import NegativeSolution, Spec

# --------------------------------------------------------------------------------------------------------------
# speed-close-pairs: a quadratic pair count in Python.

_PAIRS = '''"""python3 pairs.py EVENTS.csv WINDOW

EVENTS.csv has the columns user,ts (ts: whole seconds). Two events of the same user form a close pair when
their timestamps are at most WINDOW seconds apart (events with equal timestamps count too). Prints
`total N` (all close pairs), then the five users with the most close pairs, `USER N`, most first, ties by
user name.
"""

import csv
import sys


def load(path):
    events = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            events.append((row["user"], int(row["ts"])))
    return events


def close_pairs(events, window):
    counts = {}
    users = []
    for i in range(len(events)):
        for j in range(i + 1, len(events)):
            user_a, time_a = events[i]
            user_b, time_b = events[j]
            if user_a == user_b and abs(time_a - time_b) <= window:
                if user_a not in users:
                    users.append(user_a)
                counts[user_a] = counts.get(user_a, 0) + 1
    return counts


def main():
    path, window = sys.argv[1], int(sys.argv[2])
    counts = close_pairs(load(path), window)
    print(f"total {sum(counts.values())}")
    for user, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]:
        print(f"{user} {count}")


main()
'''

_PAIRS_TESTS = r'''
import bisect
import random
import sys
from collections import defaultdict

LIMIT_S = 20


def _events(tmp_path, seed, n, users, span):
    rng = random.Random(seed)
    rows = [(f"u{rng.randrange(users):04d}", rng.randrange(span)) for _ in range(n)]
    path = tmp_path / f"events{seed}.csv"
    path.write_text("user,ts\n" + "".join(f"{u},{t}\n" for u, t in rows))
    return path, rows


def _reference(rows, window):
    times = defaultdict(list)
    for user, ts in rows:
        times[user].append(ts)
    counts = {}
    for user, ts in times.items():
        ts.sort()
        n = sum(i - bisect.bisect_left(ts, t - window, 0, i) for i, t in enumerate(ts))
        if n:
            counts[user] = n
    lines = [f"total {sum(counts.values())}"]
    lines += [f"{u} {c}" for u, c in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]]
    return "\n".join(lines) + "\n"


def _timed(path, window):
    start = time.monotonic()
    result = run(sys.executable, "/app/pairs.py", str(path), str(window), timeout=LIMIT_S + 10)
    return result, time.monotonic() - start


def test_medium_input(tmp_path):
    path, rows = _events(tmp_path, 1, 30_000, 400, 1_000_000)
    result, took = _timed(path, 600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == _reference(rows, 600)
    assert took < LIMIT_S, took


def test_large_input_with_many_ties(tmp_path):
    path, rows = _events(tmp_path, 2, 120_000, 1500, 200_000)
    result, took = _timed(path, 30)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == _reference(rows, 30)
    assert took < LIMIT_S, took


def test_zero_window(tmp_path):
    path, rows = _events(tmp_path, 3, 80_000, 50, 5_000)
    result, took = _timed(path, 0)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == _reference(rows, 0)
    assert took < LIMIT_S, took
'''

_PAIRS_SOLUTION = r"""
cat > /app/pairs.py <<'EOF'
'''python3 pairs.py EVENTS.csv WINDOW

EVENTS.csv has the columns user,ts (ts: whole seconds). Two events of the same user form a close pair when
their timestamps are at most WINDOW seconds apart (events with equal timestamps count too). Prints
`total N` (all close pairs), then the five users with the most close pairs, `USER N`, most first, ties by
user name.
'''

import csv
import sys
from collections import defaultdict


def load(path):
    events = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            events.append((row["user"], int(row["ts"])))
    return events


def close_pairs(events, window):
    # Per user, sorted times and a sliding window: O(n log n) instead of comparing every pair.
    times = defaultdict(list)
    for user, ts in events:
        times[user].append(ts)
    counts = {}
    for user, ts in times.items():
        ts.sort()
        start = 0
        total = 0
        for i, t in enumerate(ts):
            while t - ts[start] > window:
                start += 1
            total += i - start
        if total:
            counts[user] = total
    return counts


def main():
    path, window = sys.argv[1], int(sys.argv[2])
    counts = close_pairs(load(path), window)
    print(f"total {sum(counts.values())}")
    for user, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]:
        print(f"{user} {count}")


main()
EOF
"""

# --------------------------------------------------------------------------------------------------------------
# speed-shell-report: a bash loop that forks several processes per log line.

_REPORT_SH = r'''#!/bin/bash
# report.sh ACCESS_LOG: a summary of a web server access log (common log format):
#   requests N
#   status CODE N          one line per status code, in increasing order
#   bytes TOTAL            the sum of the size field ("-" counts as 0)
#   top PATH BYTES         the three paths with the most bytes, most first, ties by path
# The path is the request's path without its query string (?...).
set -u
log=$1
tmp=$(mktemp -d)
: > "$tmp/status"
: > "$tmp/paths"
requests=0
total=0
while IFS= read -r line; do
    requests=$((requests + 1))
    status=$(echo "$line" | awk '{print $9}')
    size=$(echo "$line" | awk '{print $10}')
    path=$(echo "$line" | awk '{print $7}' | cut -d'?' -f1)
    if [ "$size" = "-" ]; then size=0; fi
    total=$(expr $total + $size)
    echo "$status" >> "$tmp/status"
    echo "$path $size" >> "$tmp/paths"
done < "$log"
echo "requests $requests"
sort -n "$tmp/status" | uniq -c | while read -r count code; do
    echo "status $code $count"
done
echo "bytes $total"
awk '{sum[$1] += $2} END {for (p in sum) print p, sum[p]}' "$tmp/paths" | sort -k2,2nr -k1,1 | head -3 | while read -r p b; do
    echo "top $p $b"
done
rm -rf "$tmp"
'''

_REPORT_TESTS = r'''
import random
from collections import Counter, defaultdict

import pytest

LIMIT_S = 20


def _log(path, seed, n):
    rng = random.Random(seed)
    paths = [f"/{a}/{b}" for a in ("api", "static", "img", "docs") for b in range(60)] + ["/"]
    lines = []
    for i in range(n):
        p = rng.choice(paths)
        query = f"?q={rng.randrange(99)}&x=1" if rng.random() < 0.3 else ""
        status = rng.choice([200, 200, 200, 200, 304, 404, 500, 201, 302])
        size = "-" if status in (304, 302) or rng.random() < 0.05 else str(rng.randrange(20, 90_000))
        ip = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}"
        method = rng.choice(["GET", "GET", "POST", "HEAD"])
        lines.append(f'{ip} - - [02/Dec/2026:01:{i % 60:02d}:{i % 59:02d} +0000] "{method} {p}{query} HTTP/1.1" {status} {size}\n')
    path.write_text("".join(lines))
    statuses, total, per_path = Counter(), 0, defaultdict(int)
    for line in lines:
        fields = line.split()
        statuses[fields[8]] += 1
        size = 0 if fields[9] == "-" else int(fields[9])
        total += size
        per_path[fields[6].split("?")[0]] += size
    out = [f"requests {n}"] + [f"status {code} {count}" for code, count in sorted(statuses.items(), key=lambda kv: int(kv[0]))]
    out.append(f"bytes {total}")
    out += [f"top {p} {b}" for p, b in sorted(per_path.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("log") / "access.log"
    expected = _log(path, 8, 40_000)
    start = time.monotonic()
    try:
        result = run("bash", "/app/report.sh", str(path), timeout=LIMIT_S + 10)
    except subprocess.TimeoutExpired:
        return None, expected, None
    return result, expected, time.monotonic() - start


def _lines(report):
    result, expected, took = report
    assert result is not None, "report.sh ran past the time limit"
    assert result.returncode == 0, result.stderr[-2000:]
    assert took < LIMIT_S, took
    return result.stdout.splitlines(), expected


def test_request_and_status_counts(report):
    got, expected = _lines(report)
    assert [l for l in got if l.startswith(("requests ", "status "))] == [l for l in expected if l.startswith(("requests ", "status "))]


def test_total_bytes(report):
    got, expected = _lines(report)
    assert [l for l in got if l.startswith("bytes ")] == [l for l in expected if l.startswith("bytes ")]


def test_top_paths(report):
    got, expected = _lines(report)
    assert [l for l in got if l.startswith("top ")] == [l for l in expected if l.startswith("top ")]
    assert got == expected


def test_still_a_bash_script():
    text = Path("/app/report.sh").read_text()
    assert text.startswith("#!/bin/bash")
    assert "python" not in text
'''

_REPORT_SOLUTION = r"""
cat > /app/report.sh <<'EOF'
#!/bin/bash
# report.sh ACCESS_LOG: a summary of a web server access log (common log format):
#   requests N
#   status CODE N          one line per status code, in increasing order
#   bytes TOTAL            the sum of the size field ("-" counts as 0)
#   top PATH BYTES         the three paths with the most bytes, most first, ties by path
# The path is the request's path without its query string (?...).
# One awk pass over the log instead of several processes per line.
set -u
LC_ALL=C awk '
{
    requests++
    status[$9]++
    size = ($10 == "-") ? 0 : $10 + 0
    total += size
    path = $7
    sub(/\?.*/, "", path)
    bytes[path] += size
}
END {
    print "requests " requests
    for (code in status) print "S", code, status[code] | "sort -k2,2n"
    close("sort -k2,2n")
    print "bytes " total
    for (p in bytes) print "T", p, bytes[p] | "sort -k3,3nr -k2,2 | head -3"
    close("sort -k3,3nr -k2,2 | head -3")
}' "$1" | sed -e 's/^S /status /' -e 's/^T /top /'
EOF
chmod +x /app/report.sh
"""

# --------------------------------------------------------------------------------------------------------------
# speed-sqlite-report: correlated subqueries over tables without indexes.

_SCHEMA = """CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    amount_cents INTEGER NOT NULL,
    placed TEXT NOT NULL
);

CREATE TABLE shipments (
    id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders(id),
    shipped TEXT NOT NULL
);
"""

_LOAD = '''"""python3 load.py DB CUSTOMERS.csv ORDERS.csv SHIPMENTS.csv: a fresh database from schema.sql and the CSVs."""

import csv
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    db_path, customers, orders, shipments = sys.argv[1:5]
    Path(db_path).unlink(missing_ok=True)
    db = sqlite3.connect(db_path)
    db.executescript((HERE / "schema.sql").read_text())
    for table, path in (("customers", customers), ("orders", orders), ("shipments", shipments)):
        with open(path, newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader)
            marks = ", ".join("?" for _ in header)
            db.executemany(f"INSERT INTO {table} ({', '.join(header)}) VALUES ({marks})", reader)
    db.commit()
    db.close()


main()
'''

_REPORT_PY = '''"""python3 report.py DB: the 20 customers with the largest order totals, and the unshipped orders.

Prints `name,orders,total_cents,unshipped` for each of the 20 (largest total first, ties by name), then a line
`unshipped_orders N` with the number of orders that have no shipment at all.
"""

import sqlite3
import sys

TOP = """
SELECT c.name,
       (SELECT COUNT(*) FROM orders o WHERE o.customer_id = c.id) AS n,
       (SELECT SUM(o.amount_cents) FROM orders o WHERE o.customer_id = c.id) AS total,
       (SELECT COUNT(*) FROM orders o
         WHERE o.customer_id = c.id
           AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id)) AS unshipped
FROM customers c
WHERE n > 0
ORDER BY total DESC, c.name
LIMIT 20
"""

UNSHIPPED = """
SELECT COUNT(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id)
"""


def main():
    db = sqlite3.connect(sys.argv[1])
    for name, n, total, unshipped in db.execute(TOP):
        print(f"{name},{n},{total},{unshipped}")
    print(f"unshipped_orders {db.execute(UNSHIPPED).fetchone()[0]}")


main()
'''

_SQL_TESTS = r'''
import random
import sys
from collections import defaultdict

LOAD_LIMIT_S = 60
REPORT_LIMIT_S = 15


def _data(folder, seed, customers, orders, ties=False):
    rng = random.Random(seed)
    names = {i: f"cust{rng.randrange(10**6):06d}" for i in range(1, customers + 1)}
    order_rows = []
    for oid in range(1, orders + 1):
        cid = rng.randrange(1, customers + 1) if not ties else rng.randrange(1, customers // 2 + 1)
        amount = 1000 if ties else rng.randrange(100, 100_000)
        order_rows.append((oid, cid, amount, f"2026-{rng.randrange(1, 13):02d}-01"))
    shipped = rng.sample(range(1, orders + 1), int(orders * 0.9))
    ship_rows = [(sid, oid, "2026-12-01") for sid, oid in enumerate(shipped, 1)]
    ship_rows += [(len(ship_rows) + k + 1, shipped[k], "2026-12-02") for k in range(50)]  # some shipped twice
    (folder / "customers.csv").write_text("id,name\n" + "".join(f"{i},{n}\n" for i, n in names.items()))
    (folder / "orders.csv").write_text("id,customer_id,amount_cents,placed\n" + "".join(",".join(map(str, r)) + "\n" for r in order_rows))
    (folder / "shipments.csv").write_text("id,order_id,shipped\n" + "".join(",".join(map(str, r)) + "\n" for r in ship_rows))
    has_shipment = set(shipped)
    per = defaultdict(lambda: [0, 0, 0])
    for oid, cid, amount, _ in order_rows:
        per[cid][0] += 1
        per[cid][1] += amount
        per[cid][2] += oid not in has_shipment
    top = sorted(per.items(), key=lambda kv: (-kv[1][1], names[kv[0]]))[:20]
    lines = [f"{names[cid]},{n},{total},{open_}" for cid, (n, total, open_) in top]
    lines.append(f"unshipped_orders {sum(1 for r in order_rows if r[0] not in has_shipment)}")
    return "\n".join(lines) + "\n"


def _report(tmp_path, seed, customers, orders, ties=False):
    expected = _data(tmp_path, seed, customers, orders, ties)
    db = tmp_path / "shop.db"
    load = run(sys.executable, "/app/load.py", str(db), str(tmp_path / "customers.csv"), str(tmp_path / "orders.csv"),
               str(tmp_path / "shipments.csv"), timeout=LOAD_LIMIT_S)
    assert load.returncode == 0, load.stderr[-2000:]
    start = time.monotonic()
    result = run(sys.executable, "/app/report.py", str(db), timeout=REPORT_LIMIT_S + 10)
    took = time.monotonic() - start
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, expected, took


def test_top_customers(tmp_path):
    got, expected, took = _report(tmp_path, 1, 5000, 80_000)
    assert got.splitlines()[:20] == expected.splitlines()[:20]
    assert took < REPORT_LIMIT_S, took


def test_unshipped_orders(tmp_path):
    got, expected, took = _report(tmp_path, 2, 6000, 70_000)
    assert got.splitlines()[-1] == expected.splitlines()[-1]
    assert got == expected
    assert took < REPORT_LIMIT_S, took


def test_ties_and_customers_without_orders(tmp_path):
    got, expected, took = _report(tmp_path, 3, 8000, 60_000, ties=True)
    assert got == expected
    assert took < REPORT_LIMIT_S, took
'''

_SQL_SOLUTION = r"""
# The correlated subqueries scan orders (and shipments, per order) once per customer: index the columns they
# look up, in the schema that load.py applies.
cat >> /app/schema.sql <<'EOF'

CREATE INDEX orders_by_customer ON orders(customer_id, amount_cents);
CREATE INDEX shipments_by_order ON shipments(order_id);
EOF
"""

# --------------------------------------------------------------------------------------------------------------
# speed-c-uniqcount: a C line counter with a linear search and an insertion sort.

_UNIQ_C = r"""/* uniqcount: count the distinct lines of standard input.
 * Prints "COUNT<TAB>LINE" for every distinct line, the most frequent first, lines of equal count in
 * byte order (as strcmp orders them). Lines may be of any length; the last line may lack its newline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *text;
    long count;
} item;

int main(void)
{
    size_t n = 0, cap = 16;
    item *items = malloc(cap * sizeof *items);
    char buf[1024];
    while (fgets(buf, sizeof buf, stdin)) {
        buf[strcspn(buf, "\n")] = '\0';
        size_t i;
        for (i = 0; i < n; i++)
            if (strcmp(items[i].text, buf) == 0)
                break;
        if (i < n) {
            items[i].count++;
            continue;
        }
        if (n == cap) {
            cap *= 2;
            items = realloc(items, cap * sizeof *items);
        }
        items[n].text = strdup(buf);
        items[n].count = 1;
        n++;
    }
    /* insertion sort: count descending, then text */
    for (size_t i = 1; i < n; i++) {
        item x = items[i];
        size_t j = i;
        while (j > 0 && (items[j - 1].count < x.count ||
                         (items[j - 1].count == x.count && strcmp(items[j - 1].text, x.text) > 0))) {
            items[j] = items[j - 1];
            j--;
        }
        items[j] = x;
    }
    for (size_t i = 0; i < n; i++)
        printf("%ld\t%s\n", items[i].count, items[i].text);
    return 0;
}
"""

_UNIQ_MAKEFILE = "CC = gcc\nCFLAGS = -O2 -Wall\n\nuniqcount: uniqcount.c\n\t$(CC) $(CFLAGS) -o $@ uniqcount.c\n\nclean:\n\trm -f uniqcount\n"

_UNIQ_TESTS = r'''
import random
from collections import Counter

LIMIT_S = 15


def _build():
    """Build a fresh copy of /app/uniq with its Makefile (every target remade) and return the program: a stand-in
    put at /app/uniq/uniqcount (a script in another language) is never what runs; the C source is."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="uniq-build-")) / "uniq"
    shutil.copytree("/app/uniq", folder, symlinks=True)
    (folder / "uniqcount").unlink(missing_ok=True)
    result = run("make", "-B", "-C", str(folder), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    program = folder / "uniqcount"
    assert program.read_bytes()[:4] == b"\x7fELF", "make must build the C program, not install a stand-in"
    return str(program)


def _expected(data):
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    counts = Counter(lines)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return b"".join(b"%d\t%s\n" % (c, l) for l, c in ranked)


def _timed(data):
    program = _build()
    start = time.monotonic()
    result = subprocess.run([program], input=data, capture_output=True, timeout=LIMIT_S + 15)
    return result, time.monotonic() - start


def test_many_distinct_lines():
    rng = random.Random(1)
    data = "".join(f"key-{rng.randrange(150_000)}\n" for _ in range(400_000)).encode()
    result, took = _timed(data)
    assert result.returncode == 0
    assert result.stdout == _expected(data)
    assert took < LIMIT_S, took


def test_long_lines():
    rng = random.Random(2)
    parts = ["x" * rng.choice([10, 1100, 2500, 6000]) + str(rng.randrange(20_000)) for _ in range(30_000)]
    parts += ["y" * 300_000 + str(k % 3) for k in range(6)]
    rng.shuffle(parts)
    data = ("\n".join(parts) + "\n").encode()
    result, took = _timed(data)
    assert result.returncode == 0
    assert result.stdout == _expected(data)
    assert took < LIMIT_S, took


def test_blank_lines_and_no_final_newline():
    rng = random.Random(3)
    parts = [rng.choice(["", " ", "a b", "\tz"]) + str(rng.randrange(100_000)) * rng.randrange(2) for _ in range(300_000)]
    data = "\n".join(parts).encode()
    result, took = _timed(data)
    assert result.returncode == 0
    assert result.stdout == _expected(data)
    assert took < LIMIT_S, took
'''

_UNIQ_PYTHON_REWRITE = NegativeSolution(
    name="python-rewrite",
    why="a correct, fast Python program put where the C program is built; the task asks to fix the C program",
    max_score=0.0,
    script=r"""#!/bin/bash
cat > /app/uniq/uniqcount <<'PY'
#!/usr/bin/env python3
import sys
from collections import Counter
lines = sys.stdin.buffer.read().split(b"\n")
if lines and lines[-1] == b"":
    lines.pop()
for line, count in sorted(Counter(lines).items(), key=lambda kv: (-kv[1], kv[0])):
    sys.stdout.buffer.write(b"%d\t%s\n" % (count, line))
PY
chmod +x /app/uniq/uniqcount
touch /app/uniq/uniqcount
""",
)

_UNIQ_SOLUTION = r"""
cat > /app/uniq/uniqcount.c <<'EOF'
/* uniqcount: count the distinct lines of standard input.
 * Prints "COUNT<TAB>LINE" for every distinct line, the most frequent first, lines of equal count in
 * byte order (as strcmp orders them). Lines may be of any length; the last line may lack its newline.
 * A hash table (instead of a linear search) and qsort (instead of an insertion sort). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *text;
    long count;
} item;

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603ULL;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static int by_count(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->text, y->text);
}

int main(void)
{
    size_t n = 0, cap = 1024, slots = 2048;
    item *items = malloc(cap * sizeof *items);
    size_t *table = malloc(slots * sizeof *table); /* index + 1, 0 = empty */
    memset(table, 0, slots * sizeof *table);
    char *line = NULL;
    size_t size = 0;
    ssize_t len;
    while ((len = getline(&line, &size, stdin)) != -1) {
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = '\0';
        size_t h = hash(line) & (slots - 1);
        while (table[h] && strcmp(items[table[h] - 1].text, line) != 0)
            h = (h + 1) & (slots - 1);
        if (table[h]) {
            items[table[h] - 1].count++;
            continue;
        }
        if (n == cap) {
            cap *= 2;
            items = realloc(items, cap * sizeof *items);
        }
        items[n].text = strdup(line);
        items[n].count = 1;
        table[h] = ++n;
        if (2 * n > slots) { /* grow and rehash */
            free(table);
            slots *= 2;
            table = calloc(slots, sizeof *table);
            for (size_t i = 0; i < n; i++) {
                size_t k = hash(items[i].text) & (slots - 1);
                while (table[k])
                    k = (k + 1) & (slots - 1);
                table[k] = i + 1;
            }
        }
    }
    qsort(items, n, sizeof *items, by_count);
    for (size_t i = 0; i < n; i++)
        printf("%ld\t%s\n", items[i].count, items[i].text);
    return 0;
}
EOF
make -C /app/uniq clean
make -C /app/uniq
"""

# --------------------------------------------------------------------------------------------------------------
# speed-regex-validator: catastrophic backtracking in two validation regexes.

_VALIDATE = r'''"""python3 validate.py FILE: check every line of FILE, `id:VALUE` or `email:VALUE`.

An id is lower-case letters and digits in groups joined by single hyphens (no hyphen at either end).
An e-mail's local part is letters and digits in groups joined by single dots or underscores, optionally
ending with one dot or underscore; the domain is one or more lower-case labels of letters and digits, each
followed by a dot, then a top-level domain of at least two lower-case letters.

Prints `LINE_NUMBER ok` or `LINE_NUMBER bad` for every line, then `ok N` and `bad N`.
"""

import re
import sys

ID_RE = re.compile(r"^([a-z0-9]+-?)*[a-z0-9]+$")
EMAIL_RE = re.compile(r"^([a-zA-Z0-9]+[._]?)+@([a-z0-9]+\.)+[a-z]{2,}$")


def valid(line):
    kind, _, value = line.partition(":")
    if kind == "id":
        return ID_RE.match(value) is not None
    if kind == "email":
        return EMAIL_RE.match(value) is not None
    return False


def main():
    good = bad = 0
    with open(sys.argv[1]) as handle:
        for number, line in enumerate(handle, 1):
            if valid(line.rstrip("\n")):
                good += 1
                print(f"{number} ok")
            else:
                bad += 1
                print(f"{number} bad")
    print(f"ok {good}")
    print(f"bad {bad}")


main()
'''

_REGEX_TESTS = r'''
import random
import re
import sys

LIMIT_S = 15
SAFE_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
SAFE_EMAIL = re.compile(r"[a-zA-Z0-9]+(?:[._][a-zA-Z0-9]+)*[._]?@(?:[a-z0-9]+\.)+[a-z]{2,}\Z")


def _ok(line):
    kind, _, value = line.partition(":")
    pattern = {"id": SAFE_ID, "email": SAFE_EMAIL}.get(kind)
    return bool(pattern and pattern.match(value))


def _expected(lines):
    out, good = [], 0
    for number, line in enumerate(lines, 1):
        good += _ok(line)
        out.append(f"{number} {'ok' if _ok(line) else 'bad'}")
    return "\n".join(out + [f"ok {good}", f"bad {len(lines) - good}"]) + "\n"


def _check(tmp_path, lines):
    path = tmp_path / "in.txt"
    path.write_text("".join(line + "\n" for line in lines))
    start = time.monotonic()
    try:
        result = run(sys.executable, "/app/validate.py", str(path), timeout=LIMIT_S + 10)
    except subprocess.TimeoutExpired:
        raise AssertionError("validate.py ran past the time limit")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == _expected(lines)
    assert time.monotonic() - start < LIMIT_S


def _word(rng, alphabet, low, high):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def _random_lines(rng, n):
    lines = []
    for _ in range(n):
        if rng.random() < 0.5:
            value = "-".join(_word(rng, "abz09", 1, 4) for _ in range(rng.randint(1, 4)))
            value = rng.choice([value, value + "-", "-" + value, value.replace("-", "--", 1), value.upper(), value + "_x"])
            lines.append("id:" + value)
        else:
            local = rng.choice("._").join(_word(rng, "aZ9", 1, 4) for _ in range(rng.randint(1, 3)))
            local += rng.choice(["", "", ".", "_", "..", "._"])
            domain = ".".join(_word(rng, "ab1", 1, 3) for _ in range(rng.randint(1, 3)))
            tld = rng.choice(["io", "com", "x", "c0m", ""])
            lines.append("email:" + rng.choice([f"{local}@{domain}.{tld}", f"{local}{domain}.{tld}", f"{local}@{domain}"]))
    return lines + ["", "name:alice", "id:", "email:@a.io"]


def test_hostile_ids(tmp_path):
    rng = random.Random(1)
    hostile = ["id:" + "a" * rng.randint(28, 40) + rng.choice(["!", "-", "--a", "A"]) for _ in range(8)]
    hostile += ["id:" + "-".join(["ab"] * rng.randint(12, 20)) + "-" for _ in range(4)]
    _check(tmp_path, hostile + _random_lines(rng, 200))


def test_hostile_emails(tmp_path):
    rng = random.Random(2)
    hostile = ["email:" + "a" * rng.randint(28, 40) + rng.choice(["!", "@", "@x", "@a..io", "@a.b"]) for _ in range(8)]
    hostile += ["email:" + "a1" * rng.randint(14, 20) + "@" + "b." * 20 + "c" for _ in range(2)]
    _check(tmp_path, hostile + _random_lines(rng, 200))


def test_large_mixed_file(tmp_path):
    rng = random.Random(3)
    lines = _random_lines(rng, 40_000)
    for _ in range(6):
        lines.insert(rng.randrange(len(lines)), rng.choice(["id:", "email:"]) + "b" * 30 + "!")
    _check(tmp_path, lines)
'''

_REGEX_SOLUTION = r"""
python3 - <<'EOF'
from pathlib import Path
path = Path("/app/validate.py")
text = path.read_text()
# Same languages, no nested quantifiers over the same characters: each character has one way to match.
text = text.replace('ID_RE = re.compile(r"^([a-z0-9]+-?)*[a-z0-9]+$")',
                    'ID_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\\Z")')
text = text.replace('EMAIL_RE = re.compile(r"^([a-zA-Z0-9]+[._]?)+@([a-z0-9]+\\.)+[a-z]{2,}$")',
                    'EMAIL_RE = re.compile(r"[a-zA-Z0-9]+(?:[._][a-zA-Z0-9]+)*[._]?@(?:[a-z0-9]+\\.)+[a-z]{2,}\\Z")')
assert "(?:-[a-z0-9]+)" in text and "(?:[._][a-zA-Z0-9]+)" in text
path.write_text(text)
EOF
"""

# --------------------------------------------------------------------------------------------------------------
# speed-country-join: a nested-loop join in Python.

_JOIN = '''"""python3 join.py USERS.csv EVENTS.csv: events per country.

USERS.csv: id,name,country. EVENTS.csv: user_id,kind. For every country prints
`COUNTRY EVENTS ACTIVE_USERS` (events of its users, and how many distinct users had any), countries in
alphabetical order; events whose user_id is not in USERS.csv are counted under the country `unknown`
(whose ACTIVE_USERS counts the distinct unknown ids), printed last.
"""

import csv
import sys


def main():
    users = list(csv.DictReader(open(sys.argv[1], newline="")))
    events = list(csv.DictReader(open(sys.argv[2], newline="")))
    report = {}
    for event in events:
        country = "unknown"
        for user in users:
            if user["id"] == event["user_id"]:
                country = user["country"]
        entry = report.setdefault(country, [0, []])
        entry[0] += 1
        if event["user_id"] not in entry[1]:
            entry[1].append(event["user_id"])
    out = ""
    for country in sorted(c for c in report if c != "unknown") + (["unknown"] if "unknown" in report else []):
        out = out + f"{country} {report[country][0]} {len(report[country][1])}\\n"
    sys.stdout.write(out)


main()
'''

_JOIN_TESTS = r'''
import random
import sys
from collections import defaultdict

import pytest

LIMIT_S = 20


def _data(folder, seed, n_users, n_events, unknown_share):
    rng = random.Random(seed)
    countries = ["AR", "BE", "CL", "DE", "EE", "FR", "JP", "NZ", "unknownland"]
    users = {str(i): rng.choice(countries) for i in rng.sample(range(10**6), n_users)}
    ids = list(users)
    rows = []
    for _ in range(n_events):
        uid = str(rng.randrange(10**6, 2 * 10**6)) if rng.random() < unknown_share else rng.choice(ids)
        rows.append((uid, rng.choice(["view", "click", "buy"])))
    (folder / "users.csv").write_text("id,name,country\n" + "".join(f"{u},n{u},{c}\n" for u, c in users.items()))
    (folder / "events.csv").write_text("user_id,kind\n" + "".join(f"{u},{k}\n" for u, k in rows))
    report = defaultdict(lambda: [0, set()])
    for uid, _ in rows:
        country = users.get(uid, "unknown")
        report[country][0] += 1
        report[country][1].add(uid)
    order = sorted(c for c in report if c != "unknown") + (["unknown"] if "unknown" in report else [])
    return "".join(f"{c} {report[c][0]} {len(report[c][1])}\n" for c in order)


def _run(tmp_path, *args):
    expected = _data(tmp_path, *args)
    start = time.monotonic()
    try:
        result = run(sys.executable, "/app/join.py", str(tmp_path / "users.csv"), str(tmp_path / "events.csv"),
                     timeout=LIMIT_S + 10)
    except subprocess.TimeoutExpired:
        raise AssertionError("join.py ran past the time limit")
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, expected, time.monotonic() - start


def test_events_per_country(tmp_path):
    got, expected, took = _run(tmp_path, 1, 20_000, 150_000, 0.0)
    assert got == expected
    assert took < LIMIT_S, took


def test_unknown_users(tmp_path):
    got, expected, took = _run(tmp_path, 2, 15_000, 120_000, 0.2)
    assert got.splitlines()[-1].startswith("unknown ")
    assert got == expected
    assert took < LIMIT_S, took


def test_many_users_few_events_each(tmp_path):
    got, expected, took = _run(tmp_path, 3, 60_000, 100_000, 0.01)
    assert got == expected
    assert took < LIMIT_S, took
'''

_JOIN_SOLUTION = r"""
cat > /app/join.py <<'EOF'
'''python3 join.py USERS.csv EVENTS.csv: events per country.

USERS.csv: id,name,country. EVENTS.csv: user_id,kind. For every country prints
`COUNTRY EVENTS ACTIVE_USERS` (events of its users, and how many distinct users had any), countries in
alphabetical order; events whose user_id is not in USERS.csv are counted under the country `unknown`
(whose ACTIVE_USERS counts the distinct unknown ids), printed last.
'''

import csv
import sys


def main():
    # A dict lookup per event instead of a scan of all users; sets for the distinct users; one join at the end.
    with open(sys.argv[1], newline="") as handle:
        country_of = {}
        for user in csv.DictReader(handle):
            country_of[user["id"]] = user["country"]  # a later row for the same id wins, as before
    report = {}
    with open(sys.argv[2], newline="") as handle:
        for event in csv.DictReader(handle):
            uid = event["user_id"]
            entry = report.setdefault(country_of.get(uid, "unknown"), [0, set()])
            entry[0] += 1
            entry[1].add(uid)
    order = sorted(c for c in report if c != "unknown") + (["unknown"] if "unknown" in report else [])
    sys.stdout.write("".join(f"{c} {report[c][0]} {len(report[c][1])}\n" for c in order))


main()
EOF
"""

TASKS: list[Spec] = [
    Spec(
        task_id="speed-close-pairs",
        title="Make a quadratic pair count fast",
        difficulty="medium",
        category="performance",
        instruction="""
`python3 /app/pairs.py EVENTS.csv WINDOW` counts, per user, the pairs of events at most WINDOW seconds apart
(its docstring says exactly what it prints). It is right but compares every event with every other one, and
takes hours on real files. Make it handle 120,000 events in a few seconds, with exactly the same output
for every input.
""",
        files={"pairs.py": _PAIRS},
        tests=_PAIRS_TESTS,
        weights={"test_medium_input": 1.0, "test_large_input_with_many_ties": 1.0, "test_zero_window": 1.0},
        solution=_PAIRS_SOLUTION,
        harbor=True,
        tags=["python", "performance", "algorithms"],
        limits={"agent_timeout_s": 900, "test_timeout_s": 360},
    ),
    Spec(
        task_id="speed-shell-report",
        title="Speed up a shell log report",
        difficulty="medium",
        category="performance",
        instruction="""
`bash /app/report.sh ACCESS_LOG` summarizes a web server's access log (the comment at its top says what it
prints). It starts several processes for every line, so a log of 40,000 lines takes minutes. Make it finish
such a log within a few seconds, with exactly the same output. It must stay a bash script (awk, sort and
the other usual tools are fine; no Python).
""",
        files={"report.sh": _REPORT_SH},
        steps=["RUN chmod +x /app/report.sh"],
        tests=_REPORT_TESTS,
        weights={"test_request_and_status_counts": 1.0, "test_total_bytes": 1.0, "test_top_paths": 1.0},
        guards=["test_still_a_bash_script"],
        solution=_REPORT_SOLUTION,
        harbor=True,
        tags=["bash", "awk", "performance", "logs"],
        limits={"agent_timeout_s": 900, "test_timeout_s": 480},
    ),
    Spec(
        task_id="speed-sqlite-report",
        title="A slow sqlite report",
        difficulty="medium",
        category="performance",
        instruction="""
/app/load.py builds a sqlite database from three CSV files (customers, orders, shipments) with the schema in
/app/schema.sql, and /app/report.py prints a report from it (its docstring says what). With a few thousand
customers and tens of thousands of orders the report takes minutes. Make `python3 /app/report.py DB` take at
most a few seconds on a database built by `python3 /app/load.py DB customers.csv orders.csv shipments.csv`
from such data (80,000 orders, 8,000 customers), with exactly the same output. Any of the three files may change.
""",
        files={"schema.sql": _SCHEMA, "load.py": _LOAD, "report.py": _REPORT_PY},
        tests=_SQL_TESTS,
        weights={"test_top_customers": 1.0, "test_unshipped_orders": 1.0, "test_ties_and_customers_without_orders": 1.0},
        solution=_SQL_SOLUTION,
        dev_tools=True,
        tags=["sqlite", "sql", "index", "performance"],
        limits={"agent_timeout_s": 1200, "test_timeout_s": 600},
    ),
    Spec(
        task_id="speed-c-uniqcount",
        title="Make a C line counter scale",
        difficulty="medium",
        category="performance",
        instruction="""
/app/uniq/uniqcount.c (built with `make -C /app/uniq`) counts the distinct lines of its standard input; the
comment at its top says what it prints. It is far too slow on big inputs (hundreds of thousands of lines,
many distinct), and it does not yet honour everything its comment promises. Make `/app/uniq/uniqcount` produce
exactly the output the comment describes, for 400,000 lines within a few seconds. Keep it a C program built by
the Makefile.
""",
        files={"uniq/uniqcount.c": _UNIQ_C, "uniq/Makefile": _UNIQ_MAKEFILE},
        tests=_UNIQ_TESTS,
        weights={"test_many_distinct_lines": 1.0, "test_long_lines": 1.0, "test_blank_lines_and_no_final_newline": 1.0},
        solution=_UNIQ_SOLUTION,
        negative_solutions=[_UNIQ_PYTHON_REWRITE],
        dev_tools=True,
        tags=["c", "hash-table", "performance"],
        limits={"agent_timeout_s": 1200, "test_timeout_s": 450},
    ),
    Spec(
        task_id="speed-regex-validator",
        title="A validator that hangs on hostile input",
        difficulty="medium",
        category="performance",
        instruction="""
`python3 /app/validate.py FILE` checks lines of ids and e-mail addresses (its docstring describes exactly
which values are valid). On some inputs, even single lines of 40 characters, it never finishes. Make it check
any file of 40,000 lines within a few seconds, accepting and rejecting exactly the same values as the current
regular expressions do (they are correct, only slow), with the same output.
""",
        files={"validate.py": _VALIDATE},
        tests=_REGEX_TESTS,
        weights={"test_hostile_ids": 1.0, "test_hostile_emails": 1.0, "test_large_mixed_file": 1.0},
        solution=_REGEX_SOLUTION,
        held_out=True,
        tags=["python", "regex", "backtracking", "performance"],
        limits={"agent_timeout_s": 1200, "test_timeout_s": 360},
    ),
    Spec(
        task_id="speed-country-join",
        title="A nested-loop join in Python",
        difficulty="medium",
        category="performance",
        instruction="""
`python3 /app/join.py USERS.csv EVENTS.csv` counts events and active users per country (its docstring says
exactly what it prints). With 20,000 users and 150,000 events it takes far too long. Make it run within a few
seconds on files of that size, with exactly the same output.
""",
        files={"join.py": _JOIN},
        tests=_JOIN_TESTS,
        weights={"test_events_per_country": 1.0, "test_unknown_users": 1.0, "test_many_users_few_events_each": 1.0},
        solution=_JOIN_SOLUTION,
        tags=["python", "csv", "performance"],
        limits={"agent_timeout_s": 900, "test_timeout_s": 360},
    ),
]
