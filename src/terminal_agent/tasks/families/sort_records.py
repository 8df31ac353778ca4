"""Family ``sort-records``: sort a whitespace-separated table by one column.

easy: no header; one ``sort -k`` solves it.
medium: a header line that must stay first, and names in the text columns that have to compare
in byte order (``LC_ALL=C``).
"""

from __future__ import annotations

import random

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    sha256_text,
    test_module,
)

COLUMNS = ("id", "name", "age", "score", "city")
NUMERIC = {"id", "age", "score"}
KEYS = tuple(f"{column}:{order}" for column in COLUMNS for order in ("asc", "desc"))
NAMES = (
    "ada", "Bea", "carl", "Dora", "eli", "Finn", "gus", "Hana", "ivo", "Jan", "kim", "Lena", "mo", "Nils",
    "oda", "Pia", "quin", "Rosa", "sam", "Tove", "uli", "Vera", "wes", "Xia", "yan", "Zoe",
)
CITIES = ("Oslo", "Lima", "Bern", "Kyiv", "Pune", "Rome", "Baku", "Doha", "Graz", "Ghent", "Turku", "Split")


def _rows(rng: random.Random, count: int) -> list[list[str]]:
    names = rng.sample(NAMES, count)
    ids = rng.sample(range(100, 1000), count)
    ages = rng.sample(range(18, 90), count)
    scores = rng.sample(range(0, 1000), count)
    cities = [f"{rng.choice(CITIES)}-{index}" for index in range(count)]  # unique, so no ties
    return [[str(ids[i]), names[i], str(ages[i]), f"{scores[i] / 10:.1f}", cities[i]] for i in range(count)]


TESTS = SHA256_HELPER + '''

def _sorted_lines():
    return Path("/app/sorted.txt").read_text().splitlines()


def test_output_has_the_same_lines():
    assert sorted(_sorted_lines()) == sorted(EXPECTED)


def test_order_is_right():
    assert _sorted_lines() == EXPECTED


def test_first_and_last_line():
    got = _sorted_lines()
    assert got[:1] == EXPECTED[:1] and got[-1:] == EXPECTED[-1:]


def test_guard_input_unchanged():
    assert sha256_of("/app/records.txt") == INPUT_SHA256
'''


class SortRecords(TaskFamily):
    name = "sort-records"
    summary = "Sort a whitespace-separated table by one column, ascending or descending."
    keys = KEYS
    key_meaning = "the column and the order (column:asc|desc)"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        column, order = key.split(":")
        medium = difficulty == "medium"
        index = COLUMNS.index(column)
        rows = _rows(rng, rng.randrange(12, 26))
        numeric = column in NUMERIC
        ordered = sorted(rows, key=lambda row: float(row[index]) if numeric else row[index].encode(), reverse=order == "desc")
        body = [" ".join(row) for row in rows]
        expected = [" ".join(row) for row in ordered]
        flag = ("n" if numeric else "") + ("r" if order == "desc" else "")
        position = index + 1
        if medium:
            header = " ".join(COLUMNS)
            text = header + "\n" + "\n".join(body) + "\n"
            expected = [header, *expected]
            instruction = (
                f"/app/records.txt is a table with a header line and columns separated by single spaces. Write it "
                f"to /app/sorted.txt sorted by the '{column}' column, {'descending' if order == 'desc' else 'ascending'}"
                f"{' (as numbers)' if numeric else ' (byte order, upper case before lower case)'}; "
                "the header stays the first line."
            )
            solution = (
                "#!/bin/bash\n"
                f"{{ head -n 1 /app/records.txt; tail -n +2 /app/records.txt | LC_ALL=C sort -k{position},{position}{flag}; }}"
                " > /app/sorted.txt\n"
            )
        else:
            text = "\n".join(body) + "\n"
            instruction = (
                "Each line of /app/records.txt holds: id, name, age, score, city (separated by spaces). "
                f"Write the lines to /app/sorted.txt sorted by {column} "
                f"{'from highest to lowest' if order == 'desc' else 'from lowest to highest'}"
                f"{'' if numeric else ' in byte order (upper case before lower case, as LC_ALL=C sort does)'}."
            )
            solution = f"#!/bin/bash\nLC_ALL=C sort -k{position},{position}{flag} /app/records.txt > /app/sorted.txt\n"
        tests = test_module({"EXPECTED": expected, "INPUT_SHA256": sha256_text(text)}, TESTS)
        return InstanceParts(
            title=f"Sort records by {column} ({order})",
            instruction=instruction,
            category="text-processing",
            test_source=tests,
            test_weights={
                "test_output_has_the_same_lines": 1.0,
                "test_order_is_right": 2.0,
                "test_first_and_last_line": 0.5,
            },
            guards=["test_guard_input_unchanged"],
            outputs=["/app/sorted.txt"],
            solution=solution,
            files={"records.txt": text},
            tags=["sort"],
            parameters={"rows": len(rows), "column": column, "order": order},
        )
