"""Small algorithmic programs, written from scratch by the agent."""

from __future__ import annotations

from _spec import Spec

TASKS = [
    Spec(
        task_id="write-fizzbuzz-rules",
        held_out=True,
        title="FizzBuzz with custom rules",
        difficulty="easy",
        category="algorithms",
        instruction="""
Write /app/fizz.py: `python3 /app/fizz.py N` prints the numbers 1..N, one per line, but a multiple of 3
prints `Fizz`, a multiple of 5 `Buzz`, a multiple of 7 `Bazz`, and a multiple of several prints the words
concatenated in that order (21 is `FizzBazz`, 105 is `FizzBuzzBazz`). N = 0 prints nothing.
""",
        tests='''
def _run(n):
    result = run("python3", "/app/fizz.py", str(n))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_first_fifteen():
    assert _run(15) == ["1", "2", "Fizz", "4", "Buzz", "Fizz", "Bazz", "8", "Fizz", "Buzz", "11", "Fizz", "13", "Bazz", "FizzBuzz"]


def test_combinations():
    out = _run(105)
    assert out[20] == "FizzBazz" and out[34] == "BuzzBazz" and out[104] == "FizzBuzzBazz" and len(out) == 105


def test_zero_and_one():
    assert _run(0) == []
    assert _run(1) == ["1"]
''',
        weights={"test_first_fifteen": 2.0, "test_combinations": 1.5, "test_zero_and_one": 0.5},
        solution='''cat > /app/fizz.py <<'EOF'
import sys

for i in range(1, int(sys.argv[1]) + 1):
    words = "".join(word for divisor, word in ((3, "Fizz"), (5, "Buzz"), (7, "Bazz")) if i % divisor == 0)
    print(words or i)
EOF''',
        tags=["python"],
    ),
    Spec(
        task_id="roman-numerals",
        title="Roman numeral converter",
        difficulty="medium",
        category="algorithms",
        instruction="""
Write /app/roman.py, a command-line converter: `python3 /app/roman.py 1994` prints `MCMXCIV` and
`python3 /app/roman.py MCMXCIV` prints `1994`. Numbers from 1 to 3999 are valid. Anything else (0, 4000, a
malformed numeral like `IIII` or `IC`, lower case) prints an error to stderr and exits with status 2.
""",
        tests='''
def _run(arg):
    return run("python3", "/app/roman.py", arg)


def test_to_roman():
    assert [_run(str(n)).stdout.strip() for n in (1, 4, 9, 14, 40, 90, 400, 1994, 3999)] == [
        "I", "IV", "IX", "XIV", "XL", "XC", "CD", "MCMXCIV", "MMMCMXCIX"]


def test_from_roman():
    assert [_run(r).stdout.strip() for r in ("III", "LVIII", "MCMXCIV", "MMXXVI")] == ["3", "58", "1994", "2026"]


def test_round_trip():
    import random

    for n in random.Random(7).sample(range(1, 4000), 30):
        assert _run(_run(str(n)).stdout.strip()).stdout.strip() == str(n)


def test_invalid_input():
    assert Path("/app/roman.py").is_file()
    valid = _run("3999")
    assert valid.returncode == 0 and valid.stdout.strip() == "MMMCMXCIX"
    for arg in ("0", "4000", "IIII", "IC", "mcm", "ABC", "-3"):
        result = _run(arg)
        assert result.returncode == 2 and result.stdout == "" and result.stderr.strip(), arg
        assert "can't open file" not in result.stderr, result.stderr
''',
        weights={"test_to_roman": 1.0, "test_from_roman": 1.0, "test_round_trip": 1.0, "test_invalid_input": 1.0},
        solution='''cat > /app/roman.py <<'EOF'
import sys

VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n):
    out = []
    for value, symbol in VALUES:
        while n >= value:
            out.append(symbol)
            n -= value
    return "".join(out)


ROMAN = {to_roman(n): n for n in range(1, 4000)}


def main(arg):
    if arg.isdigit() and 1 <= int(arg) <= 3999:
        print(to_roman(int(arg)))
    elif arg in ROMAN:
        print(ROMAN[arg])
    else:
        print(f"invalid input: {arg!r}", file=sys.stderr)
        sys.exit(2)


main(sys.argv[1] if len(sys.argv) > 1 else "")
EOF''',
        tags=["python"],
    ),
    Spec(
        task_id="bracket-checker",
        title="Check balanced brackets",
        difficulty="medium",
        category="algorithms",
        instruction="""
Write /app/brackets.py: it reads lines from standard input and, for each line, prints `ok` when every `(`, `[`
and `{` is closed by the matching bracket in the right order, otherwise `error at N`, where N is the 1-based
column of the first bracket that cannot be matched (an unexpected closer, or the first opener still open at
the end of the line). Other characters are ignored.
""",
        tests='''
def _check(*lines):
    result = run("python3", "/app/brackets.py", input="".join(l + "\\n" for l in lines))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_balanced():
    assert _check("(a[b]{c})", "", "no brackets", "{[()()]}") == ["ok"] * 4


def test_unexpected_closer():
    assert _check("(]", "a)b", "([)]") == ["error at 2", "error at 2", "error at 3"]


def test_unclosed_opener():
    assert _check("((x)", "ok {", "[()") == ["error at 1", "error at 4", "error at 1"]
''',
        weights={"test_balanced": 1.0, "test_unexpected_closer": 1.5, "test_unclosed_opener": 1.5},
        solution='''cat > /app/brackets.py <<'EOF'
import sys

PAIRS = {")": "(", "]": "[", "}": "{"}

for line in sys.stdin:
    stack = []
    error = None
    for column, char in enumerate(line.rstrip("\\n"), 1):
        if char in "([{":
            stack.append((char, column))
        elif char in PAIRS:
            if stack and stack[-1][0] == PAIRS[char]:
                stack.pop()
            else:
                error = column
                break
    if error is None and stack:
        error = stack[0][1]
    print("ok" if error is None else f"error at {error}")
EOF''',
        tags=["python", "stack"],
        held_out=True,
    ),
    Spec(
        task_id="transpose-matrix",
        held_out=True,
        title="Transpose a table",
        difficulty="easy",
        category="algorithms",
        instruction="""
/app/matrix.txt holds a table of numbers separated by single spaces (every row has the same number of
columns). Write its transpose to /app/transposed.txt in the same format.
""",
        files={"matrix.txt": "1 2 3 4\n5 6 7 8\n9 10 11 12\n"},
        tests='''
def _rows():
    return [l.split(" ") for l in Path("/app/transposed.txt").read_text().splitlines()]


def test_shape():
    rows = _rows()
    assert len(rows) == 4 and all(len(r) == 3 for r in rows)


def test_first_row():
    assert _rows()[0] == ["1", "5", "9"]


def test_values():
    assert _rows() == [["1", "5", "9"], ["2", "6", "10"], ["3", "7", "11"], ["4", "8", "12"]]
''',
        weights={"test_shape": 1.0, "test_first_row": 1.0, "test_values": 2.0},
        solution="""awk '{for (i = 1; i <= NF; i++) cell[i] = (NR == 1 ? $i : cell[i] " " $i)} END {for (i = 1; i <= NF; i++) print cell[i]}' /app/matrix.txt > /app/transposed.txt""",
        tags=["awk"],
        one_command=True,
    ),
    Spec(
        task_id="run-length-codec",
        held_out=True,
        title="Run-length encoder and decoder",
        difficulty="medium",
        category="algorithms",
        instruction="""
Write /app/rle.py. `python3 /app/rle.py encode` reads standard input and writes each run of a repeated
character as COUNT followed by the character (`aaab` becomes `3a1b`); `python3 /app/rle.py decode` does the
reverse. The input never contains ASCII digits, but any other character may occur (spaces, newlines,
non-ASCII letters); counts can exceed 9. Decoding an encoding must give back the exact input.
""",
        tests='''
def _rle(mode, text):
    result = subprocess.run(["python3", "/app/rle.py", mode], input=text.encode(), capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.decode()


def test_encode():
    assert _rle("encode", "aaab") == "3a1b"
    assert _rle("encode", "z" * 12) == "12z"


def test_decode():
    assert _rle("decode", "3a1b") == "aaab" and _rle("decode", "12z1 2é") == "z" * 12 + " éé"


def test_round_trip_with_newlines_and_unicode():
    for text in ["a\\n\\n\\nb", "ééé  xyy", "", "q" * 130]:
        assert _rle("decode", _rle("encode", text)) == text
''',
        weights={"test_encode": 1.0, "test_decode": 1.0, "test_round_trip_with_newlines_and_unicode": 2.0},
        solution='''cat > /app/rle.py <<'EOF'
import sys


def encode(text):
    out, i = [], 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(f"{j - i}{text[i]}")
        i = j
    return "".join(out)


def decode(text):
    out, i = [], 0
    while i < len(text):
        j = i
        while text[j].isascii() and text[j].isdigit():
            j += 1
        out.append(text[j] * int(text[i:j]))
        i = j + 1
    return "".join(out)


data = sys.stdin.buffer.read().decode("utf-8")
sys.stdout.buffer.write((encode(data) if sys.argv[1] == "encode" else decode(data)).encode("utf-8"))
EOF''',
        tags=["python"],
    ),
    Spec(
        task_id="topological-order",
        title="Order jobs by their dependencies",
        difficulty="medium",
        category="algorithms",
        instruction="""
Write /app/order.py: `python3 /app/order.py FILE` reads lines `JOB: DEP DEP ...` (a job with no
dependencies has nothing after the colon; a dependency that has no line of its own is a job too) and prints
every job once, each after all of its dependencies. Among jobs that are ready at the same time, the
alphabetically first comes first. If the dependencies contain a cycle, print `cycle` to stderr and exit 2.
""",
        files={"jobs.txt": "deploy: build test\nbuild: fetch\ntest: build\nfetch:\ndocs: fetch\n"},
        tests='''
def _run(path):
    return run("python3", "/app/order.py", str(path))


def test_sample():
    result = _run("/app/jobs.txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["fetch", "build", "docs", "test", "deploy"]


def test_undeclared_dependency(tmp_path):
    f = tmp_path / "j.txt"
    f.write_text("b: a\\nc:\\n")
    assert _run(f).stdout.split() == ["a", "b", "c"]


def test_cycle(tmp_path):
    acyclic = tmp_path / "a.txt"
    acyclic.write_text("x: y\\ny:\\n")
    assert _run(acyclic).stdout.split() == ["y", "x"]
    f = tmp_path / "c.txt"
    f.write_text("x: y\\ny: z\\nz: x\\nw:\\n")
    result = _run(f)
    assert result.returncode == 2 and "cycle" in result.stderr
''',
        weights={"test_sample": 1.5, "test_undeclared_dependency": 1.0, "test_cycle": 1.5},
        solution='''cat > /app/order.py <<'EOF'
import heapq
import sys

deps = {}
for line in open(sys.argv[1]):
    if ":" in line:
        job, rest = line.split(":", 1)
        deps.setdefault(job.strip(), set()).update(rest.split())
for job in list(deps):
    for dep in deps[job]:
        deps.setdefault(dep, set())
waiting = {job: set(d) for job, d in deps.items()}
ready = [job for job, d in waiting.items() if not d]
heapq.heapify(ready)
order = []
while ready:
    job = heapq.heappop(ready)
    order.append(job)
    for other, d in waiting.items():
        if job in d:
            d.discard(job)
            if not d:
                heapq.heappush(ready, other)
if len(order) != len(deps):
    print("cycle", file=sys.stderr)
    sys.exit(2)
print("\\n".join(order))
EOF''',
        tags=["python", "graphs"],
        held_out=True,
    ),
    Spec(
        task_id="merge-intervals",
        title="Merge overlapping intervals",
        difficulty="medium",
        category="algorithms",
        instruction="""
/app/intervals.txt holds one interval `START END` (integers, START <= END) per line, in no particular order.
Write /app/merged.txt: the union of the intervals as disjoint `START END` lines, sorted by START. Intervals
that touch (`1 3` and `3 5`) merge; `1 2` and `3 4` do not.
""",
        files={"intervals.txt": "8 10\n1 3\n2 6\n15 18\n6 7\n20 20\n17 19\n11 12\n"},
        tests='''
def _got():
    return [tuple(map(int, l.split())) for l in Path("/app/merged.txt").read_text().splitlines() if l.strip()]


def test_count():
    assert len(_got()) == 5


def test_sorted_disjoint_and_covering():
    got = _got()
    assert got
    assert all(a[1] < b[0] for a, b in zip(got, got[1:]))
    for start, end in [(8, 10), (1, 3), (2, 6), (15, 18), (6, 7), (20, 20), (17, 19), (11, 12)]:
        assert any(s <= start and end <= e for s, e in got), (start, end)


def test_exact():
    assert _got() == [(1, 7), (8, 10), (11, 12), (15, 19), (20, 20)]
''',
        weights={"test_count": 1.0, "test_sorted_disjoint_and_covering": 1.0, "test_exact": 2.0},
        solution='''sort -n -k1,1 -k2,2 /app/intervals.txt | awk 'NR == 1 {s = $1; e = $2; next}
$1 <= e {if ($2 > e) e = $2; next}
{print s, e; s = $1; e = $2}
END {if (NR) print s, e}' > /app/merged.txt''',
        tags=["sorting", "awk"],
    ),
]
