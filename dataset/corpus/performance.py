"""Performance fixes: the programs are correct but too slow; the tests give a generous time limit."""

from __future__ import annotations

from _spec import BASH_GUARD_NAME, Spec, bash_script_guard

_FIB = '''import sys


def ways(n):
    """Number of ways to climb n stairs taking 1, 2 or 3 steps at a time."""
    if n < 0:
        return 0
    if n == 0:
        return 1
    return ways(n - 1) + ways(n - 2) + ways(n - 3)


print(ways(int(sys.argv[1])))
'''

_DEDUPE = '''import sys

seen = []
out = []
for line in open(sys.argv[1]):
    if line not in seen:
        seen.append(line)
        out.append(line)
sys.stdout.write("".join(out))
'''

_LOOP = '''#!/bin/bash
# Print the sum of the second column of a whitespace-separated file.
total=0
while read -r line; do
  value=$(echo "$line" | cut -d' ' -f2)
  total=$(echo "$total + $value" | bc 2>/dev/null || expr $total + $value)
done < "$1"
echo $total
'''

_PRIMES = '''import sys


def is_prime(n):
    if n < 2:
        return False
    for d in range(2, n):
        if n % d == 0:
            return False
    return True


limit = int(sys.argv[1])
print(sum(1 for n in range(limit) if is_prime(n)))
'''

TASKS = [
    Spec(
        task_id="speed-up-stairs",
        title="Make the stair counter fast",
        difficulty="easy",
        category="performance",
        instruction="""
`python3 /app/stairs.py N` prints the number of ways to climb N stairs with steps of 1, 2 or 3. It is exact
but takes forever beyond N = 30. Make it answer N up to 5000 within a second or two, with the same output.
""",
        files={"stairs.py": _FIB},
        tests='''
def _ways(n, timeout=10):
    result = run("python3", "/app/stairs.py", str(n), timeout=timeout)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


def test_small_values():
    assert [_ways(n) for n in (0, 1, 2, 3, 4, 10)] == [1, 1, 2, 4, 7, 274]
    assert _ways(40, timeout=5) == 23837527729


def test_n_60_is_fast():
    assert _ways(60) == 4680045560037375


def test_n_5000():
    value = _ways(5000)
    assert len(str(value)) == 1324 and value % 1_000_000_007 == 965592141
''',
        weights={"test_small_values": 0.5, "test_n_60_is_fast": 1.5, "test_n_5000": 1.5},
        solution='''cat > /app/stairs.py <<'EOF'
import sys


def ways(n):
    """Number of ways to climb n stairs taking 1, 2 or 3 steps at a time."""
    a, b, c = 1, 0, 0  # ways(i), ways(i - 1), ways(i - 2)
    for _ in range(n):
        a, b, c = a + b + c, a, b
    return a


print(ways(int(sys.argv[1])))
EOF''',
        tags=["python", "dynamic-programming"],
    ),
    Spec(
        task_id="speed-up-dedupe",
        title="Quadratic de-duplication",
        difficulty="medium",
        category="performance",
        instruction="""
`python3 /app/dedupe.py FILE` prints the lines of FILE without repeats, keeping the first occurrence of each
in order. It is far too slow for big files (it checks a list for every line). Make it handle 200,000 lines in
a few seconds, with exactly the same output.
""",
        files={"dedupe.py": _DEDUPE},
        tests='''
import functools
import random
import tempfile


@functools.lru_cache(maxsize=None)
def _large():
    """One run on 200,000 lines (shared by the tests): (result or None when it took over 20 s, expected output)."""
    rng = random.Random(5)
    lines = [f"item-{rng.randrange(100_000)}\\n" for _ in range(200_000)]
    path = Path(tempfile.mkdtemp()) / "large.txt"
    path.write_text("".join(lines))
    expected = "".join(dict.fromkeys(lines))
    try:
        return run("python3", "/app/dedupe.py", str(path), timeout=20), expected
    except subprocess.TimeoutExpired:
        return None, expected


def _dedupe(tmp_path, text):
    result, _ = _large()
    assert result is not None, "dedupe.py still takes over 20 s on 200,000 lines"
    path = tmp_path / "in.txt"
    path.write_text(text)
    result = run("python3", "/app/dedupe.py", str(path))
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_small(tmp_path):
    assert _dedupe(tmp_path, "b\\na\\nb\\nc\\na\\n") == "b\\na\\nc\\n"


def test_last_line_and_spaces_kept(tmp_path):
    assert _dedupe(tmp_path, "x\\ny\\nx") == "x\\ny\\nx"
    assert _dedupe(tmp_path, "a \\na\\na \\n\\n\\n") == "a \\na\\n\\n"


def test_large_file_is_fast():
    result, expected = _large()
    assert result is not None, "dedupe.py still takes over 20 s on 200,000 lines"
    assert result.returncode == 0 and result.stdout == expected
''',
        weights={"test_small": 1.0, "test_last_line_and_spaces_kept": 1.0, "test_large_file_is_fast": 2.0},
        solution='''cat > /app/dedupe.py <<'EOF'
import sys

seen = set()
out = []
for line in open(sys.argv[1]):
    if line not in seen:
        seen.add(line)
        out.append(line)
sys.stdout.write("".join(out))
EOF''',
        tags=["python", "complexity"],
    ),
    Spec(
        task_id="speed-up-shell-sum",
        title="A shell loop that forks per line",
        difficulty="medium",
        category="performance",
        instruction="""
`/app/sum_column.sh FILE` prints the sum of the second column of a file of `NAME NUMBER` lines (integers,
possibly negative). It starts several processes per line and is far too slow on /app/big.txt (200,000 lines).
Make it print the same result for any such file within a few seconds. It must stay the command
`/app/sum_column.sh FILE`, and a bash script (standard tools such as awk are fine; no rewrite in another
language).
""",
        files={"sum_column.sh": _LOOP},
        steps=[
            "RUN chmod +x /app/sum_column.sh && python3 -c \"import random; r = random.Random(3); "
            "open('/app/big.txt', 'w').write(''.join(f'k{i} {r.randrange(-1000, 1000)}\\n' for i in range(200000)))\""
        ],
        tests='''
import functools
import random
import tempfile


@functools.lru_cache(maxsize=None)
def _big():
    """One run on a fresh 200,000-line file (shared by the tests): (result or None when it took over 20 s, sum)."""
    rng = random.Random(11)
    values = [rng.randrange(-1000, 1000) for _ in range(200_000)]
    path = Path(tempfile.mkdtemp()) / "big.txt"
    path.write_text("".join(f"n{i} {v}\\n" for i, v in enumerate(values)))
    try:
        return run("/app/sum_column.sh", str(path), timeout=20), sum(values)
    except subprocess.TimeoutExpired:
        return None, sum(values)


def _sum(tmp_path, text):
    result, _ = _big()
    assert result is not None, "sum_column.sh still takes over 20 s on 200,000 lines"
    f = tmp_path / "in.txt"
    f.write_text(text)
    result = run("/app/sum_column.sh", str(f))
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_small(tmp_path):
    assert _sum(tmp_path, "a 1\\nb -5\\nc 10\\n") == "6"
    assert _sum(tmp_path, "a -7\\nb -5\\n") == "-12"


def test_big_file_fast():
    result, expected = _big()
    assert result is not None, "sum_column.sh still takes over 20 s on 200,000 lines"
    assert result.returncode == 0 and result.stdout.strip() == str(expected)


def test_empty_file(tmp_path):
    assert _sum(tmp_path, "") == "0"
''' + bash_script_guard("/app/sum_column.sh"),
        weights={"test_small": 1.0, "test_big_file_fast": 2.0, "test_empty_file": 1.0},
        guards=[BASH_GUARD_NAME],
        solution='''cat > /app/sum_column.sh <<'EOF'
#!/bin/bash
# Print the sum of the second column of a whitespace-separated file.
awk '{total += $2} END {print total + 0}' "$1"
EOF''',
        tags=["bash", "awk"],
    ),
    Spec(
        task_id="speed-up-prime-count",
        title="Counting primes too slowly",
        difficulty="medium",
        category="performance",
        instruction="""
`python3 /app/primes.py LIMIT` prints how many primes are below LIMIT, but uses trial division by every
number and takes minutes for LIMIT = 2,000,000. Make it answer that in a few seconds, with the same output
for every LIMIT >= 0.
""",
        files={"primes.py": _PRIMES},
        tests='''
import functools


def _count(limit, timeout=30):
    result = run("python3", "/app/primes.py", str(limit), timeout=timeout)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


@functools.lru_cache(maxsize=None)
def _two_million():
    """One timed run for LIMIT = 2,000,000 (shared by the tests); None when it took over 15 s."""
    try:
        return _count(2_000_000, timeout=15)
    except subprocess.TimeoutExpired:
        return None


def test_small_limits():
    assert _two_million() is not None, "primes.py still takes over 15 s for 2,000,000"
    assert [_count(n) for n in (0, 1, 2, 3, 10, 100)] == [0, 0, 0, 1, 4, 25]


def test_one_hundred_thousand():
    assert _count(100_000, timeout=10) == 9592


def test_two_million_is_fast():
    assert _two_million() == 148933
''',
        weights={"test_small_limits": 1.0, "test_one_hundred_thousand": 1.0, "test_two_million_is_fast": 2.0},
        solution='''cat > /app/primes.py <<'EOF'
import sys

limit = int(sys.argv[1])
if limit < 3:
    print(0)
    sys.exit()
sieve = bytearray([1]) * limit
sieve[0] = sieve[1] = 0
for n in range(2, int(limit ** 0.5) + 1):
    if sieve[n]:
        sieve[n * n :: n] = bytes(len(range(n * n, limit, n)))
print(sum(sieve))
EOF''',
        tags=["python", "sieve"],
    ),
]
