"""Debugging Python programs."""

from __future__ import annotations

from _spec import Spec

_PAGINATE = '''"""Split a list of items into pages."""


def paginate(items, page, per_page):
    """Items of 1-based page number ``page``; an empty list past the end."""
    start = page * per_page
    return items[start:start + per_page - 1]


def page_count(n_items, per_page):
    return n_items // per_page
'''

_TAGS = '''"""Collect tags for each article."""


def add_tag(tag, tags=[]):
    tags.append(tag)
    return tags


def tags_for(article):
    result = None
    for word in article.split():
        if word.startswith("#"):
            result = add_tag(word[1:])
    return result or []
'''

_REPORT = '''#!/usr/bin/env python3
"""Print the total amount per customer of /app/orders.csv, sorted by customer."""
import sys


def main(path):
    totals = {}
    with open(path) as handle:
        next(handle)
        for line in handle:
            customer, item, amount = line.strip().split(",")
            totals[customer] = totals.get(customer, 0) + float(amount)
    for customer in sorted(totals):
        print(f"{customer}: {totals[customer]:.2f}")


main(sys.argv[1] if len(sys.argv) > 1 else "/app/orders.csv")
'''

_ORDERS = '''customer,item,amount
"Smith, Anna",tea,3.50
Bo,coffee,2.25
"Smith, Anna","cups, 6 pack",12.00
Bo,cake,4.75
Chen,"beans, 1 kg",18.40
'''

_DATES = '''#!/usr/bin/env python3
"""Print how many days each project of /app/projects.txt took (lines: name start end, dates as YYYY-MM-DD)."""
import datetime as dt

for line in open("/app/projects.txt"):
    name, start, end = line.split()
    first = dt.datetime.strptime(start, "%Y-%d-%m")
    last = dt.datetime.strptime(end, "%Y-%d-%m")
    print(f"{name} {(last - first).days}")
'''
_PROJECTS = "alpha 2026-01-05 2026-01-20\nbeta 2026-02-01 2026-03-15\ngamma 2025-12-30 2026-01-02\ndelta 2026-03-13 2026-04-13\n"

_CHARS = '''#!/usr/bin/env python3
"""Print the number of characters (not bytes) and of lines of a text file."""
import sys

path = sys.argv[1]
with open(path, "rb") as handle:
    data = handle.read()
newlines = data.count(b"\\n")
print(f"chars={len(data)}")
print(f"lines={newlines}")
'''

_PKG_MAIN = '''from app.helpers import greet


def main():
    print(greet("world"))


if __name__ == "__main__":
    main()
'''
_PKG_HELPERS = '''from app.format import title_case


def greet(name):
    return "Hello, " + title_case(name) + "!"
'''
_PKG_FORMAT = '''def title_case(text):
    return " ".join(part[:1].upper() + part[1:] for part in text.split(" "))
'''

_MONEY = '''#!/usr/bin/env python3
"""Sum the prices of /app/prices.txt (one decimal price per line) and print the total with two decimals."""
total = 0
for line in open("/app/prices.txt"):
    if line.strip():
        total += float(line)
print("total=" + str(round(total, 2)))
'''
_PRICES = "0.10\n0.20\n19.99\n1.005\n2.50\n0.05\n\n100.00\n"

_CACHE = '''"""A tiny least-recently-used cache."""


class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.items = {}

    def get(self, key, default=None):
        return self.items.get(key, default)

    def put(self, key, value):
        self.items[key] = value
        if len(self.items) > self.capacity:
            oldest = next(iter(self.items))
            del self.items[oldest]
'''

TASKS = [
    Spec(
        task_id="fix-pagination",
        held_out=True,
        title="Fix the pagination helper",
        difficulty="easy",
        category="debugging",
        instruction="""
/app/paginate.py has two functions: `paginate(items, page, per_page)` should return the items of the
1-based page `page` (an empty list past the end), and `page_count(n_items, per_page)` the number of pages
needed (0 for no items). Both have bugs. Fix them without changing their signatures.
""",
        files={"paginate.py": _PAGINATE},
        tests='''
import sys

sys.path.insert(0, "/app")


def _module():
    import importlib

    import paginate

    return importlib.reload(paginate)


def test_first_and_middle_pages():
    m = _module()
    items = list(range(1, 11))
    assert m.paginate(items, 1, 3) == [1, 2, 3]
    assert m.paginate(items, 2, 3) == [4, 5, 6]


def test_last_page_and_past_the_end():
    m = _module()
    items = list(range(1, 11))
    assert m.paginate(items, 4, 3) == [10]
    assert m.paginate(items, 5, 3) == []


def test_page_count():
    m = _module()
    assert [m.page_count(n, 3) for n in (0, 1, 3, 4, 10)] == [0, 1, 1, 2, 4]
''',
        weights={"test_first_and_middle_pages": 1.5, "test_last_page_and_past_the_end": 1.0, "test_page_count": 1.5},
        solution='''python3 - <<'EOF'
from pathlib import Path
p = Path("/app/paginate.py")
s = p.read_text()
s = s.replace("start = page * per_page", "start = (page - 1) * per_page")
s = s.replace("items[start:start + per_page - 1]", "items[start:start + per_page]")
s = s.replace("return n_items // per_page", "return -(-n_items // per_page)")
p.write_text(s)
EOF''',
        tags=["python", "off-by-one"],
    ),
    Spec(
        task_id="fix-mutable-default",
        title="Tags leak between articles",
        difficulty="medium",
        category="debugging",
        instruction="""
In /app/tags.py, `tags_for(article)` should return the hashtags of one article (words starting with `#`,
without the `#`, in order). Called for several articles, it returns tags of earlier articles too. Fix it;
`add_tag(tag, tags)` with an explicit list must keep appending to that list and returning it.
""",
        files={"tags.py": _TAGS},
        tests='''
import importlib
import sys

sys.path.insert(0, "/app")


def _tags():
    import tags

    return importlib.reload(tags)


def test_same_article_twice():
    tags = _tags()
    assert tags.tags_for("hello #a world #b") == ["a", "b"]
    assert tags.tags_for("hello #a world #b") == ["a", "b"]


def test_articles_do_not_share_tags():
    tags = _tags()
    tags.tags_for("#x #y")
    assert tags.tags_for("#z") == ["z"]
    assert tags.tags_for("no tags here") == []


def test_add_tag():
    tags = _tags()
    mine = ["q"]
    assert tags.add_tag("r", mine) is mine and mine == ["q", "r"]
    assert tags.add_tag("s") == ["s"]
    assert tags.add_tag("t") == ["t"]
''',
        weights={"test_same_article_twice": 1.0, "test_articles_do_not_share_tags": 2.0, "test_add_tag": 1.0},
        solution='''python3 - <<'EOF'
from pathlib import Path
p = Path("/app/tags.py")
s = p.read_text()
s = s.replace("def add_tag(tag, tags=[]):\\n    tags.append(tag)", "def add_tag(tag, tags=None):\\n    if tags is None:\\n        tags = []\\n    tags.append(tag)")
s = s.replace("    result = None\\n", "    result = []\\n")
s = s.replace("result = add_tag(word[1:])", "result = add_tag(word[1:], result)")
p.write_text(s)
EOF''',
        tags=["python"],
    ),
    Spec(
        task_id="fix-csv-quoted-commas",
        title="Report crashes on quoted commas",
        difficulty="medium",
        category="debugging",
        instruction="""
/app/report.py prints the total amount per customer of a CSV file (default /app/orders.csv), sorted by
customer name, as `NAME: TOTAL` with two decimals. It crashes on this file because some fields are quoted
and contain commas. Fix the script so it handles any valid CSV with the columns customer,item,amount.
Do not change /app/orders.csv.
""",
        files={"report.py": _REPORT, "orders.csv": _ORDERS},
        tests='''
def test_runs_on_the_orders():
    import re

    result = run("python3", "/app/report.py")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines and all(re.fullmatch(r".+: [0-9]+\\.[0-9]{2}", line) for line in lines), lines


def test_totals():
    result = run("python3", "/app/report.py")
    assert result.stdout.splitlines() == ["Bo: 7.00", "Chen: 18.40", "Smith, Anna: 15.50"]


def test_other_file(tmp_path):
    data = tmp_path / "o.csv"
    data.write_text('customer,item,amount\\n"Z, z",x,1\\nA,"y, y",2.5\\nA,q,0.25\\n')
    result = run("python3", "/app/report.py", str(data))
    assert result.stdout.splitlines() == ["A: 2.75", "Z, z: 1.00"]


def test_orders_unchanged():
    assert unchanged("/app/orders.csv")
''',
        weights={"test_runs_on_the_orders": 0.5, "test_totals": 2.0, "test_other_file": 1.5},
        guards=["test_orders_unchanged"],
        solution='''python3 - <<'EOF'
from pathlib import Path
p = Path("/app/report.py")
s = p.read_text()
s = s.replace("import sys\\n", "import csv\\nimport sys\\n", 1)
s = s.replace("    with open(path) as handle:\\n        next(handle)\\n        for line in handle:\\n            customer, item, amount = line.strip().split(\\",\\")",
              "    with open(path, newline=\\"\\") as handle:\\n        rows = csv.reader(handle)\\n        next(rows)\\n        for customer, item, amount in rows:")
p.write_text(s)
EOF''',
        tags=["python", "csv"],
    ),
    Spec(
        task_id="fix-date-format",
        title="Project durations are wrong",
        difficulty="easy",
        category="debugging",
        instruction="""
/app/durations.py prints, for each line `name start end` of /app/projects.txt (dates YYYY-MM-DD), the
project name and the number of days from start to end. It crashes or prints wrong numbers. Fix the script.
""",
        files={"durations.py": _DATES, "projects.txt": _PROJECTS},
        tests='''
import re


def _out():
    result = run("python3", "/app/durations.py")
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_one_line_per_project():
    out = _out()
    assert [line.split()[0] for line in out] == ["alpha", "beta", "gamma", "delta"]
    assert all(re.fullmatch(r"[a-z]+ -?[0-9]+", line) for line in out), out


def test_sample_projects():
    assert _out() == ["alpha 15", "beta 42", "gamma 3", "delta 31"]


def test_other_projects():
    original = Path("/app/projects.txt").read_text()
    try:
        Path("/app/projects.txt").write_text("leap 2024-02-28 2024-03-01\\nnewyear 2026-12-31 2027-01-01\\nsame 2026-05-05 2026-05-05\\nlong 2025-01-13 2026-01-12\\n")
        assert _out() == ["leap 2", "newyear 1", "same 0", "long 364"]
    finally:
        Path("/app/projects.txt").write_text(original)
''',
        weights={"test_one_line_per_project": 0.5, "test_sample_projects": 1.5, "test_other_projects": 2.0},
        solution="sed -i 's/%Y-%d-%m/%Y-%m-%d/g' /app/durations.py",
        tags=["python", "dates"],
        one_command=True,
    ),
    Spec(
        task_id="fix-unicode-char-count",
        title="Count characters, not bytes",
        difficulty="medium",
        category="edge-cases",
        instruction="""
`python3 /app/charcount.py FILE` should print `chars=N` (the number of Unicode characters of the UTF-8
file) and `lines=M` (the number of newline characters). It counts bytes instead. Fix it. /app/greek.txt
is a sample input.
""",
        files={"charcount.py": _CHARS, "greek.txt": "Καλημέρα κόσμε\nnaïve café — ok\n日本語\n"},
        tests='''
def _run(path):
    result = run("python3", "/app/charcount.py", str(path))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_sample():
    assert _run("/app/greek.txt") == ["chars=35", "lines=3"]


def test_other_scripts_and_crlf(tmp_path):
    f = tmp_path / "a.txt"
    f.write_bytes("€ 10\\r\\n😀 ok\\r\\nплан\\n".encode("utf-8"))
    assert _run(f) == ["chars=17", "lines=3"]


def test_empty_and_no_final_newline(tmp_path):
    empty = tmp_path / "e.txt"
    empty.write_text("")
    assert _run(empty) == ["chars=0", "lines=0"]
    f = tmp_path / "n.txt"
    f.write_text("ü\\nß", encoding="utf-8")
    assert _run(f) == ["chars=3", "lines=1"]
''',
        weights={"test_sample": 1.5, "test_other_scripts_and_crlf": 1.5, "test_empty_and_no_final_newline": 1.0},
        solution='''cat > /app/charcount.py <<'EOF'
#!/usr/bin/env python3
"""Print the number of characters (not bytes) and of lines of a text file."""
import sys

with open(sys.argv[1], encoding="utf-8", newline="") as handle:
    text = handle.read()
print(f"chars={len(text)}")
print(f"lines={text.count(chr(10))}")
EOF''',
        tags=["python", "unicode"],
    ),
    Spec(
        task_id="fix-package-import",
        held_out=True,
        title="The app does not start",
        difficulty="easy",
        category="debugging",
        instruction="""
`cd /app && python3 -m app.main` should print `Hello, World!`, but it fails. Find out why and fix the
package under /app/app (do not change what `greet` or `title_case` do).
""",
        files={"app/main.py": _PKG_MAIN, "app/helpers.py": _PKG_HELPERS, "app/formatting.py": _PKG_FORMAT},
        tests='''
def test_app_runs():
    result = run("python3", "-m", "app.main", cwd="/app")
    assert result.returncode == 0, result.stderr


def test_output():
    result = run("python3", "-m", "app.main", cwd="/app")
    assert result.stdout == "Hello, World!\\n"


def test_title_case_kept():
    result = run("python3", "-c", "from app.helpers import greet; print(greet('ada lovelace'))", cwd="/app")
    assert result.stdout.strip() == "Hello, Ada Lovelace!"
''',
        weights={"test_app_runs": 1.0, "test_output": 1.5, "test_title_case_kept": 1.0},
        solution="sed -i 's/from app.format import/from app.formatting import/' /app/app/helpers.py",
        tags=["python", "imports"],
        one_command=True,
    ),
    Spec(
        task_id="fix-money-rounding",
        title="Exact money totals",
        difficulty="medium",
        category="debugging",
        instruction="""
/app/total.py sums the prices in /app/prices.txt (one decimal number per line; blank lines are skipped)
and should print `total=X.YY`: the exact decimal sum rounded half-up to two decimals, always with two
decimals. Binary floats make it print wrong or oddly formatted totals. Fix it (use exact decimal arithmetic).
""",
        files={"total.py": _MONEY, "prices.txt": _PRICES},
        tests='''
def _run(tmp_path=None, text=None):
    if text is not None:
        Path("/app/prices.txt").write_text(text)
    result = run("python3", "/app/total.py")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_given_prices():
    assert _run() == "total=123.85"


def test_two_decimals_always():
    original = Path("/app/prices.txt").read_text()
    try:
        assert _run(text="1\\n2\\n") == "total=3.00"
    finally:
        Path("/app/prices.txt").write_text(original)


def test_half_up_and_tenths():
    original = Path("/app/prices.txt").read_text()
    try:
        assert _run(text="0.1\\n0.2\\n") == "total=0.30"
        assert _run(text="0.125\\n") == "total=0.13"
    finally:
        Path("/app/prices.txt").write_text(original)
''',
        weights={"test_given_prices": 1.5, "test_two_decimals_always": 1.0, "test_half_up_and_tenths": 1.5},
        solution='''cat > /app/total.py <<'EOF'
#!/usr/bin/env python3
"""Sum the prices of /app/prices.txt (one decimal price per line) and print the total with two decimals."""
from decimal import ROUND_HALF_UP, Decimal

total = Decimal(0)
for line in open("/app/prices.txt"):
    if line.strip():
        total += Decimal(line.strip())
print("total=" + str(total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)))
EOF''',
        tags=["python", "decimal"],
    ),
    Spec(
        task_id="fix-lru-cache",
        title="The LRU cache evicts the wrong entry",
        difficulty="medium",
        category="debugging",
        instruction="""
/app/lru.py implements `LRUCache(capacity)` with `get(key, default=None)` and `put(key, value)`. When it is
full, `put` of a new key must evict the *least recently used* entry, where both `get` (of a present key)
and `put` count as a use. It currently evicts the oldest inserted key and `get` does not count. Fix the class;
keep its interface.
""",
        files={"lru.py": _CACHE},
        tests='''
import sys

sys.path.insert(0, "/app")
from lru import LRUCache  # noqa: E402


def test_workload_matches_a_reference():
    import random
    from collections import OrderedDict

    rng = random.Random(7)
    for capacity in (1, 3, 5):
        cache, model = LRUCache(capacity), OrderedDict()
        for step in range(3000):
            key = rng.randrange(9)
            if rng.random() < 0.5:
                expected = model.get(key, -1)
                if key in model:
                    model.move_to_end(key)
                assert cache.get(key, -1) == expected, (capacity, step, key)
            else:
                model[key] = step
                model.move_to_end(key)
                if len(model) > capacity:
                    model.popitem(last=False)
                cache.put(key, step)


def test_get_counts_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3


def test_put_of_existing_key_counts_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert cache.get("a") == 10 and cache.get("b") is None and cache.get("c") == 3
''',
        weights={"test_workload_matches_a_reference": 1.0, "test_get_counts_as_use": 1.5, "test_put_of_existing_key_counts_as_use": 1.5},
        solution='''cat > /app/lru.py <<'EOF'
"""A tiny least-recently-used cache."""
from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.items = OrderedDict()

    def get(self, key, default=None):
        if key not in self.items:
            return default
        self.items.move_to_end(key)
        return self.items[key]

    def put(self, key, value):
        self.items[key] = value
        self.items.move_to_end(key)
        if len(self.items) > self.capacity:
            self.items.popitem(last=False)
EOF''',
        tags=["python", "algorithms"],
        held_out=True,
    ),
]
