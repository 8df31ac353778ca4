"""Family ``fix-package-bug`` (held out as a whole): repair a seeded bug in a multi-file Python package.

/app/ledger is a small bookkeeping package (``parse``, ``totals``, ``report`` and ``__main__``
modules, a README). ``python3 -m ledger [--since DATE] FILE`` prints one balance per account and a
TOTAL line. One mutation (the key) breaks it; a user report names the symptom. The tests run the
package on fresh ledger files that the agent never sees, each drawn so that the bug changes the
output, so a fix that only special-cases the sample fails.

easy: one bug, the report says what goes wrong.
medium: two bugs in two different modules (the key's and one more), two user reports; each test
file triggers the first bug only, the second only, or both, so fixing one earns part of the credit.
"""

from __future__ import annotations

import random
import shlex
from collections.abc import Callable
from typing import Any, cast

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    sha256_text,
    test_module,
)

PARSE = '''"""Reading ledger files: one entry per line, DATE,ACCOUNT,AMOUNT."""


def parse_amount(text):
    """'12.34', '-0.5' or '7' -> an integer number of cents."""
    text = text.strip()
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-")
    whole, _, frac = text.partition(".")
    return sign * (int(whole or "0") * 100 + int((frac + "00")[:2]))


def parse_line(line):
    """(date, account, cents) of one line; None for blank lines and # comments."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    date, account, amount = line.split(",")
    return date.strip(), account.strip().lower(), parse_amount(amount)


def read_entries(path):
    with open(path) as handle:
        return [entry for entry in map(parse_line, handle) if entry is not None]
'''

TOTALS = '''"""Balances per account."""


def balances(entries, since=None):
    """Account -> summed cents, counting only entries dated on or after ``since`` when it is given."""
    result = {}
    for date, account, cents in entries:
        if since is not None and date < since:
            continue
        result[account] = result.get(account, 0) + cents
    return result
'''

REPORT = '''"""The printed report."""


def format_cents(cents):
    """-1234 -> '-12.34'."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def format_report(balances):
    """One 'ACCOUNT AMOUNT' line per account, sorted by account, then 'TOTAL AMOUNT'."""
    lines = [f"{account} {format_cents(balances[account])}" for account in sorted(balances)]
    lines.append(f"TOTAL {format_cents(sum(balances.values()))}")
    return "\\n".join(lines) + "\\n"
'''

MAIN = '''"""python3 -m ledger [--since YYYY-MM-DD] FILE"""

import sys

from ledger.parse import read_entries
from ledger.report import format_report
from ledger.totals import balances


def main(argv):
    since = None
    if argv[:1] == ["--since"]:
        since, argv = argv[1], argv[2:]
    sys.stdout.write(format_report(balances(read_entries(argv[0]), since)))


main(sys.argv[1:])
'''

README = """# ledger

`python3 -m ledger [--since YYYY-MM-DD] FILE` reads a ledger file and prints the balance of every account.

A ledger file has one entry per line: `DATE,ACCOUNT,AMOUNT`, e.g. `2026-03-01,Rent,-950.00`.
Blank lines and lines starting with `#` are ignored. Amounts have at most two decimals and may be negative
(`-12.5` is minus twelve and a half). Account names are case-insensitive and printed in lower case.
With `--since`, only entries dated on or after that day count.

The report has one line `ACCOUNT AMOUNT` per account, sorted by account name, then `TOTAL AMOUNT` (the sum
of all balances). Amounts are printed with two decimals (`-3.05`, `120.00`).
"""

# key -> (module, correct text, buggy text, what a user reports)
BUGS: dict[str, tuple[str, str, str, str]] = {
    "comment-lines": ("parse", 'if not line or line.startswith("#"):', "if not line:",
                      "the tool crashes on ledger files that contain # comment lines"),
    "short-cents": ("parse", 'int((frac + "00")[:2])', 'int(frac or "0")',
                    "amounts with a single decimal come out wrong (12.5 is counted as 12.05)"),
    "negative-amounts": ("parse", 'sign = -1 if text.startswith("-") else 1', "sign = 1",
                         "refunds and payments (negative amounts) are added instead of subtracted"),
    "account-case": ("parse", "account.strip().lower()", "account.strip()",
                     "'Rent' and 'rent' show up as two different accounts"),
    "since-boundary": ("totals", "date < since", "date <= since",
                       "with --since, the entries dated on that very day are left out"),
    "negative-format": ("report", "    cents = abs(cents)\n", "",
                        "negative balances are printed garbled (like --3.50)"),
    "total-line": ("report", "sum(balances.values())", "sum(v for v in balances.values() if v > 0)",
                   "the TOTAL line does not match the sum of the account lines when an account is negative"),
    "sort-accounts": ("report", "for account in sorted(balances)]", "for account in balances]",
                      "the accounts are not listed in alphabetical order"),
}
INSEPARABLE = {frozenset(("negative-amounts", "total-line")), frozenset(("negative-amounts", "negative-format"))}
"""Pairs no ledger can tell apart one at a time (both need a negative balance, which one of them removes)."""
SOURCES = {"parse": PARSE, "totals": TOTALS, "report": REPORT}
ACCOUNTS = ("rent", "food", "salary", "travel", "books", "gym", "power", "phone", "gifts")


DELETED_AFTER = {"negative-format": '    sign = "-" if cents < 0 else ""'}
"""For a bug that deletes a line: the line it follows."""


def _sed_pattern(text: str) -> str:
    """``text`` as a literal basic regular expression for ``sed s|...|...|``."""
    return "".join("\\" + ch if ch in "\\.*[]^$|" else ch for ch in text)


def _sed_replacement(text: str) -> str:
    return "".join("\\" + ch if ch in "\\&|" else ch for ch in text)


def _sources(bugs: list[str]) -> dict[str, str]:
    sources = dict(SOURCES)
    for bug in bugs:
        module, good, bad, _ = BUGS[bug]
        assert sources[module].count(good) == 1, bug
        sources[module] = sources[module].replace(good, bad)
    return sources


def _run(sources: dict[str, str], text: str, since: str | None) -> str:
    """What ``python3 -m ledger`` prints for ``text`` with these module sources (or an error marker)."""
    spaces: dict[str, dict[str, object]] = {}
    for module in ("parse", "totals", "report"):
        space: dict[str, object] = {}
        exec(compile(sources[module], f"ledger/{module}.py", "exec"), space)  # noqa: S102 - our own source
        spaces[module] = space
    try:
        # the functions of the package's own source, run above: what they take and give is that source's business
        parse_line = cast(Callable[[str], Any], spaces["parse"]["parse_line"])
        balances = cast(Callable[[list[Any], Any], Any], spaces["totals"]["balances"])
        format_report = cast(Callable[[Any], Any], spaces["report"]["format_report"])
        entries = [e for e in map(parse_line, text.splitlines(True)) if e is not None]
        return str(format_report(balances(entries, since)))
    except Exception as exc:  # noqa: BLE001 - a crash is an output that differs
        return f"<crash {type(exc).__name__}>"


def _ledger(rng: random.Random) -> tuple[str, str | None]:
    """A random ledger file and maybe a --since day; features that trigger the bugs appear at random."""
    accounts = rng.sample(ACCOUNTS, rng.randrange(1, 6))
    p_case, p_negative, p_short, p_comment = (rng.choice([0.0, p]) for p in (0.3, 0.35, 0.25, 0.15))
    lines = []
    days = sorted(f"2026-0{rng.randrange(1, 7)}-{rng.randrange(1, 29):02d}" for _ in range(rng.randrange(5, 14)))
    for day in days:
        account = rng.choice(accounts)
        if rng.random() < p_case:
            account = account.capitalize() if rng.random() < 0.7 else account.upper()
        cents = rng.randrange(1, 200_000) * (-1 if rng.random() < p_negative else 1)
        amount = f"{abs(cents) // 100}.{abs(cents) % 100:02d}"
        if rng.random() < p_short:
            amount = amount[:-1]  # one decimal
        lines.append(f"{day},{account},{'-' if cents < 0 else ''}{amount}")
        if rng.random() < p_comment:
            lines.append(rng.choice(["# checked", "", "# moved from old book"]))
    since = rng.choice(days) if rng.random() < 0.5 else None
    return "\n".join(lines) + "\n", since


def _draw(rng: random.Random, broken: list[str], fixed: list[str], everything: list[str]) -> tuple[str, str | None, str]:
    """A ledger whose output differs under each bug of ``broken`` alone, matches under each of ``fixed`` alone,
    and differs with all of ``everything`` in place."""
    good = _sources([])
    for _ in range(5000):
        text, since = _ledger(rng)
        right = _run(good, text, since)
        if right.startswith("<crash"):
            continue
        if all(_run(_sources([b]), text, since) != right for b in broken) and all(
            _run(_sources([f]), text, since) == right for f in fixed
        ) and _run(_sources(everything), text, since) != right:
            return text, since, right
    raise RuntimeError(f"fix-package-bug: no ledger separates {broken} from {fixed}")


TESTS = SHA256_HELPER + '''

def _ledger(tmp_path, case):
    path = tmp_path / "book.csv"
    path.write_text(CASES[case]["text"])
    since = CASES[case]["since"]
    command = ["python3", "-m", "ledger", *(["--since", since] if since else []), str(path)]
    return subprocess.run(command, capture_output=True, text=True, cwd="/app", timeout=60)


def _check(tmp_path, case):
    proc = _ledger(tmp_path, case)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == CASES[case]["expected"], proc.stdout


def test_guard_sample_unchanged():
    assert sha256_of("/app/data/sample.csv") == SAMPLE_SHA256
'''


def _case_test(name: str, case: int) -> str:
    return f"\n\ndef {name}(tmp_path):\n    _check(tmp_path, {case})\n"


class FixPackageBug(TaskFamily):
    name = "fix-package-bug"
    summary = "Repair seeded bugs in a multi-file Python package; the fix is run on unseen input files."
    keys = tuple(BUGS)
    key_meaning = "the bug seeded into the package"
    held_out_family = True

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        bugs = [key]
        if medium:
            second = rng.choice(sorted(b for b in BUGS if BUGS[b][0] != BUGS[key][0]
                                       and frozenset((key, b)) not in INSEPARABLE))
            bugs.append(second)
        sources = _sources(bugs)
        if medium:
            first, second = bugs
            cases = [_draw(rng, [first], [second], bugs), _draw(rng, [second], [first], bugs),
                     _draw(rng, [first, second], [], bugs)]
            names = ["test_first_report_is_fixed", "test_second_report_is_fixed", "test_both_together"]
            weights = {names[0]: 1.5, names[1]: 1.5, names[2]: 1.0}
        else:
            cases = [_draw(rng, [key], [], bugs) for _ in range(3)]
            names = ["test_fresh_ledger_one", "test_fresh_ledger_two", "test_fresh_ledger_three"]
            weights = {names[0]: 1.0, names[1]: 1.5, names[2]: 1.5}
        sample, _since = _ledger(rng)
        files = {
            "ledger/__init__.py": '"""A small bookkeeping tool; see README.md."""\n',
            "ledger/__main__.py": MAIN,
            "ledger/parse.py": sources["parse"],
            "ledger/totals.py": sources["totals"],
            "ledger/report.py": sources["report"],
            "ledger/README.md": README,
            "data/sample.csv": sample,
        }
        reports = [BUGS[bug][3] for bug in bugs]
        if medium:
            complaint = f"Two users report problems: first, {reports[0]}; second, {reports[1]}. Fix both bugs."
        else:
            complaint = f"A user reports that {reports[0]}. Find the bug and fix it."
        instruction = (
            "/app/ledger is a small Python package (several modules; /app/ledger/README.md describes what it must "
            "do): `cd /app && python3 -m ledger [--since YYYY-MM-DD] FILE` prints the balance of every account of a "
            f"ledger file. /app/data/sample.csv is an example ledger. {complaint} Keep the command line and the "
            "output format as the README describes them; the fix is checked on other ledger files. Do not edit "
            "the sample."
        )
        edits = []
        for bug in bugs:
            module, good, bad, _ = BUGS[bug]
            if bad:
                edits.append(f"sed -i {shlex.quote('s|' + _sed_pattern(bad) + '|' + _sed_replacement(good) + '|')} "
                             f"/app/ledger/{module}.py")
            else:  # the bug deleted a line: put it back after the line before it
                edits.append(f"sed -i {shlex.quote('/' + _sed_pattern(DELETED_AFTER[bug]) + '/a' + chr(92) + good.rstrip())} "
                             f"/app/ledger/{module}.py")
        solution = "#!/bin/bash\nset -e\n" + "\n".join(edits) + "\n"
        body = TESTS + "".join(_case_test(name, index) for index, name in enumerate(names))
        constants = {
            "CASES": [{"text": text, "since": since, "expected": right} for text, since, right in cases],
            "SAMPLE_SHA256": sha256_text(sample),
        }
        return InstanceParts(
            title=f"Fix the ledger package ({', '.join(bugs)})",
            instruction=instruction,
            category="debugging",
            test_source=test_module(constants, body),
            test_weights=weights,
            guards=["test_guard_sample_unchanged"],
            solution=solution,
            files=files,
            tags=["python", "debugging", "multi-file", "package"],
            parameters={"bugs": bugs},
        )
