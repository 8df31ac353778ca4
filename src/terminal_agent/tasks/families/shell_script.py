"""Family ``shell-script`` (held out as a whole): write a small reusable command, tested on fresh inputs.

The agent writes an executable script /app/bin/NAME that reads a file named by its argument and
prints a result on stdout. The tests run it on inputs drawn by the generator that the agent never
sees (an example input and its output are shipped), so a script that prints the sample's answer fails.
The key is the transformation.

easy: one argument, the input is clean.
medium: the input has blank lines and stray spaces to ignore, the script must also read stdin when
no argument is given, and a missing file must make it exit with status 2.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    sha256_text,
    test_module,
)

WORDS = ("alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta", "zeta", "iota")
EXTS = ("txt", "py", "md", "log", "csv", "json", "sh")


def _clean(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines if line.strip()]


def _running_total(lines: list[str]) -> str:
    total, out = 0, []
    for line in _clean(lines):
        total += int(line)
        out.append(f"{total}\n")
    return "".join(out)


def _sum_by_key(lines: list[str]) -> str:
    totals: dict[str, int] = {}
    for line in _clean(lines):
        key, value = line.split()
        totals[key] = totals.get(key, 0) + int(value)
    return "".join(f"{key} {totals[key]}\n" for key in sorted(totals))


def _count_ext(lines: list[str]) -> str:
    counts: dict[str, int] = {}
    for line in _clean(lines):
        name = line.rsplit("/", 1)[-1]
        ext = name.rsplit(".", 1)[1] if "." in name.lstrip(".") else "(none)"
        counts[ext] = counts.get(ext, 0) + 1
    return "".join(f"{counts[e]} {e}\n" for e in sorted(counts, key=lambda e: (-counts[e], e)))


def _longest(lines: list[str]) -> str:
    clean = _clean(lines)
    best = max(clean, key=len)  # the first of the longest
    return f"{len(best)} {best}\n"


def _histogram(lines: list[str]) -> str:
    buckets: dict[int, int] = {}
    for line in _clean(lines):
        value = int(line)
        buckets[value // 10 * 10] = buckets.get(value // 10 * 10, 0) + 1
    return "".join(f"{b}-{b + 9} {buckets[b]}\n" for b in sorted(buckets))


def _reverse_fields(lines: list[str]) -> str:
    return "".join(",".join(reversed(line.split(","))) + "\n" for line in _clean(lines))


def _gen_signed(rng: random.Random) -> list[str]:
    return [str(rng.randrange(-500, 500)) for _ in range(rng.randrange(8, 20))]


def _gen_sum(rng: random.Random) -> list[str]:
    return [f"{rng.choice(WORDS)} {rng.randrange(0, 500)}" for _ in range(rng.randrange(8, 20))]


def _gen_ext(rng: random.Random) -> list[str]:
    out = []
    for _ in range(rng.randrange(8, 20)):
        name = rng.choice(WORDS) + ("" if rng.random() < 0.15 else "." + rng.choice(EXTS))
        out.append(f"src/{rng.choice(WORDS)}/{name}")
    return out


def _gen_longest(rng: random.Random) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 8))) for _ in range(rng.randrange(6, 14))]


def _gen_numbers(rng: random.Random) -> list[str]:
    return [str(rng.randrange(0, 100)) for _ in range(rng.randrange(10, 30))]


def _gen_csv(rng: random.Random) -> list[str]:
    width = rng.randrange(2, 5)
    return [",".join(rng.choice(WORDS) for _ in range(width)) for _ in range(rng.randrange(5, 12))]


# key -> (script name, what it prints, python reference, input generator, awk/bash body working on "$input")
SCRIPTS: dict[str, tuple[str, str, Callable[[list[str]], str], Callable[[random.Random], list[str]], str]] = {
    "running-total": (
        "runsum", "for lines holding one whole number each (negative ones too), the running total after each "
        "line, one number per line", _running_total, _gen_signed, "awk '{s += $1; print s}'",
    ),
    "sum-by-key": (
        "sumkeys", "for lines 'KEY NUMBER', one line 'KEY TOTAL' per key (the numbers summed), sorted by key "
        "in byte order", _sum_by_key, _gen_sum,
        "awk '{t[$1] += $2} END {for (k in t) print k, t[k]}' | LC_ALL=C sort",
    ),
    "count-extensions": (
        "extcount", "for a list of file paths, one line 'COUNT EXT' per file extension (the text after the last "
        "dot of the file name; '(none)' when the name has no dot), most frequent first, ties in byte order of EXT",
        _count_ext, _gen_ext,
        "awk '{n = split($0, p, \"/\"); f = p[n]; sub(/^\\./, \"\", f); "
        "if (index(f, \".\")) {m = split(f, q, \".\"); e = q[m]} else e = \"(none)\"; c[e]++} "
        "END {for (e in c) print c[e], e}' | LC_ALL=C sort -k1,1nr -k2,2",
    ),
    "longest-line": (
        "longest", "one line 'LENGTH LINE': the longest line and its length in characters (the first one when "
        "several are equally long)", _longest, _gen_longest,
        "awk 'length($0) > best {best = length($0); line = $0} END {print best, line}'",
    ),
    "histogram": (
        "histo", "for a list of whole numbers from 0 to 99, one line 'LOW-HIGH COUNT' per bucket of ten that "
        "holds any number (0-9, 10-19, ...), in increasing order", _histogram, _gen_numbers,
        "awk '{b = int($1 / 10) * 10; c[b]++} END {for (b in c) print b \"-\" b + 9, c[b]}' | sort -n",
    ),
    "reverse-fields": (
        "revfields", "every comma-separated line with its fields in reverse order",
        _reverse_fields, _gen_csv,
        "awk -F, '{s = $NF; for (i = NF - 1; i >= 1; i--) s = s \",\" $i; print s}'",
    ),
}


def _messy(rng: random.Random, lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if rng.random() < 0.15:
            out.append(rng.choice(["", "   "]))
        out.append(("  " if rng.random() < 0.2 else "") + line + (" " if rng.random() < 0.2 else ""))
    return out


TESTS = SHA256_HELPER + '''

def _script(*args, stdin=None):
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, input=stdin, timeout=60)


def _on(tmp_path, case):
    path = tmp_path / "input.txt"
    path.write_text(CASES[case][0])
    proc = _script(str(path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_fresh_input(tmp_path):
    assert _on(tmp_path, 0) == CASES[0][1]


def test_another_fresh_input(tmp_path):
    assert _on(tmp_path, 1) == CASES[1][1]


def test_a_third_fresh_input(tmp_path):
    assert _on(tmp_path, 2) == CASES[2][1]


def test_guard_sample_output():
    """Printing the shipped example output earns nothing; a script that gets the example wrong earns nothing."""
    proc = _script("/app/examples/input.txt")
    assert proc.returncode == 0 and proc.stdout == SAMPLE_OUTPUT, proc.stdout


def test_guard_example_unchanged():
    assert sha256_of("/app/examples/input.txt") == SAMPLE_SHA256
'''

MEDIUM_TESTS = '''

def test_reads_stdin_without_argument():
    proc = _script(stdin=CASES[3][0])
    assert proc.returncode == 0 and proc.stdout == CASES[3][1], proc.stdout


def test_missing_file_exits_2():
    proc = _script("/app/no/such/file.txt")
    assert proc.returncode == 2 and not proc.stdout
    assert Path(SCRIPT).is_file() and proc.stderr.strip(), "a message on stderr"
'''


class ShellScript(TaskFamily):
    name = "shell-script"
    summary = "Write a small reusable command-line script; it is run on unseen inputs."
    keys = tuple(SCRIPTS)
    key_meaning = "the transformation the script performs"
    held_out_family = True

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        name, prints, reference, generate, body = SCRIPTS[key]
        script = f"/app/bin/{name}"

        def draw() -> tuple[str, str]:
            lines = generate(rng)
            shown = _messy(rng, lines) if medium else lines
            return "\n".join(shown) + "\n", reference(shown)

        sample_text, sample_output = draw()
        cases: list[tuple[str, str]] = []
        while len(cases) < 4:
            text, output = draw()
            if output != sample_output and all(output != other for _, other in cases):
                cases.append((text, output))
        instruction = (
            f"Write an executable script {script} (any language installed here: bash, awk, python3 ...). "
            f"`{name} FILE` must print {prints}. /app/examples/input.txt is an example input and "
            f"/app/examples/output.txt what `{name} /app/examples/input.txt` must print, byte for byte. "
            "The script will be run on other inputs."
        )
        weights = {"test_fresh_input": 1.0, "test_another_fresh_input": 1.0, "test_a_third_fresh_input": 1.0}
        tests = TESTS
        if medium:
            instruction += (
                " Ignore blank lines and leading or trailing spaces of every line. With no argument it reads "
                "standard input instead. When the file does not exist it prints an error message on stderr, "
                "nothing on stdout, and exits with status 2."
            )
            weights.update({"test_reads_stdin_without_argument": 1.0, "test_missing_file_exits_2": 0.5})
            tests += MEDIUM_TESTS
            clean = "sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' | grep -v '^$' | "
            solution_body = (
                f'if [ $# -ge 1 ] && [ ! -f "$1" ]; then echo "{name}: $1: no such file" >&2; exit 2; fi\n'
                f'cat -- "${{1:--}}" | {clean}{body}\n'
            )
        else:
            solution_body = f'cat -- "$1" | {body}\n'
        solution = (
            "#!/bin/bash\nmkdir -p /app/bin\ncat > " + script + " <<'EOF'\n#!/bin/bash\n" + solution_body
            + "EOF\nchmod +x " + script + "\n"
        )
        constants = {
            "SCRIPT": script,
            "CASES": cases,
            "SAMPLE_OUTPUT": sample_output,
            "SAMPLE_SHA256": sha256_text(sample_text),
        }
        return InstanceParts(
            title=f"Write the {name} command",
            instruction=instruction,
            category="scripting",
            test_source=test_module(constants, tests),
            test_weights=weights,
            guards=["test_guard_example_unchanged", "test_guard_sample_output"],
            solution=solution,
            files={"examples/input.txt": sample_text, "examples/output.txt": sample_output},
            outputs=[script],
            tags=["bash", "awk", "scripting"],
            parameters={"script": name},
        )
