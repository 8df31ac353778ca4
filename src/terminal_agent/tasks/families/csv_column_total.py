"""Family ``csv-column-total``: totals of one CSV column.

easy: the grand total of the column; plain comma-separated values (``awk -F,`` works).
medium: one total per region, and a quoted ``note`` column that contains commas, so splitting
on commas breaks and a CSV parser is needed.
"""

from __future__ import annotations

import csv
import io
import random

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    sha256_text,
    test_module,
)

COLUMNS = ("amount", "units", "minutes", "points", "distance_km", "visits", "downloads", "clicks", "tickets", "pages")
REGIONS = ("north", "south", "east", "west", "central")
NOTES = ("ok", "late, but fine", "paid", "see ticket 12, 14", "rush", "returned, refunded", "")


TESTS = SHA256_HELPER + '''

def _lines():
    return Path(OUTPUT).read_text().split()


def test_output_exists():
    assert Path(OUTPUT).is_file() and _lines()


def test_values_are_right():
    assert sorted(_lines()) == sorted(EXPECTED)


def test_exact_output():
    assert _lines() == EXPECTED


def test_guard_data_unchanged():
    assert sha256_of("/app/data.csv") == DATA_SHA256
'''


class CsvColumnTotal(TaskFamily):
    name = "csv-column-total"
    summary = "Total one column of a CSV file (overall, or per region with quoted commas in the way)."
    keys = COLUMNS
    key_meaning = "the column totalled"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        others = rng.sample([c for c in COLUMNS if c != key], 2)
        header = ["id", "region", *others, key] if rng.random() < 0.5 else ["id", key, "region", *others]
        if medium:
            header.insert(rng.randrange(2, len(header) + 1), "note")
        rows = []
        for index in range(rng.randrange(10, 40)):
            row = {"id": str(index + 1), "region": rng.choice(REGIONS), "note": rng.choice(NOTES)}
            for column in [*others, key]:
                row[column] = str(rng.randrange(0, 500))
            rows.append(row)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        text = buffer.getvalue()
        if medium:
            output = "/app/totals.txt"
            totals: dict[str, int] = {}
            for row in rows:
                totals[row["region"]] = totals.get(row["region"], 0) + int(row[key])
            expected = [f"{region},{totals[region]}" for region in sorted(totals)]
            instruction = (
                f"/app/data.csv has a header row. For each region, add up the '{key}' column and write one line "
                f"'region,total' per region to {output}, sorted by region name. Careful: some cells are quoted and "
                "contain commas."
            )
            program = (
                "import csv\n"
                "totals = {}\n"
                "for row in csv.DictReader(open('/app/data.csv', newline='')):\n"
                f"    totals[row['region']] = totals.get(row['region'], 0) + int(row['{key}'])\n"
                "for region in sorted(totals):\n"
                "    print(f'{region},{totals[region]}')\n"
            )
        else:
            output = "/app/total.txt"
            expected = [str(sum(int(row[key]) for row in rows))]
            instruction = f"Write the total of the '{key}' column of /app/data.csv (it has a header row) to {output}."
            program = (
                "import csv\n"
                f"print(sum(int(row['{key}']) for row in csv.DictReader(open('/app/data.csv', newline=''))))\n"
            )
        solution = f"#!/bin/bash\npython3 - > {output} <<'EOF'\n{program}EOF\n"
        tests = test_module({"OUTPUT": output, "EXPECTED": expected, "DATA_SHA256": sha256_text(text)}, TESTS)
        return InstanceParts(
            title=f"Total of the {key} column",
            instruction=instruction,
            category="data-processing",
            test_source=tests,
            test_weights={
                "test_output_exists": 0.5,
                "test_values_are_right": 2.0,
                "test_exact_output": 1.0,
            },
            guards=["test_guard_data_unchanged"],
            outputs=[output],
            solution=solution,
            files={"data.csv": text},
            tags=["csv"],
            parameters={"rows": len(rows), "header": header},
        )
