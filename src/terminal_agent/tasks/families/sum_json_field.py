"""Family ``sum-json-field``: add up one numeric field of JSON records.

easy: a JSON array where every record has the field.
medium: JSON Lines where some records lack the field, hold ``null``, or nest it one level deeper
under ``"stats"`` (those count too).
"""

from __future__ import annotations

import json
import random

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    sha256_text,
    test_module,
)

FIELDS = (
    "latency_ms", "bytes", "retries", "score", "price_cents", "quantity", "duration_s", "errors",
    "weight_g", "visits", "pages", "tokens",
)
NAMES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


TESTS = SHA256_HELPER + '''

def _answer():
    return Path("/app/answer.txt").read_text().strip()


def test_answer_is_an_integer():
    int(_answer())


def test_sum_is_close():
    assert abs(int(_answer()) - EXPECTED) <= max(1, EXPECTED // 10), "more than 10% off"


def test_sum_is_right():
    assert int(_answer()) == EXPECTED


def test_guard_data_unchanged():
    assert sha256_of(DATA) == DATA_SHA256
'''


class SumJsonField(TaskFamily):
    name = "sum-json-field"
    summary = "Sum one integer field over JSON records (an array, or JSON Lines with gaps and nesting)."
    keys = FIELDS
    key_meaning = "the field summed"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        others = [f for f in FIELDS if f != key]
        records, total = [], 0
        for index in range(rng.randrange(15, 60)):
            record: dict[str, object] = {"id": index + 1, "name": rng.choice(NAMES)}
            for other in rng.sample(others, 2):
                record[other] = rng.randrange(1000)
            value = rng.randrange(0, 10_000)
            roll = rng.random()
            if medium and roll < 0.15:
                pass  # field missing
            elif medium and roll < 0.25:
                record[key] = None
            elif medium and roll < 0.4:
                record["stats"] = {key: value}
                total += value
            else:
                record[key] = value
                total += value
            records.append(record)
        if medium:
            path = "data/records.jsonl"
            text = "\n".join(json.dumps(r) for r in records) + "\n"
            instruction = (
                f"/app/data/records.jsonl holds one JSON object per line. Add up the '{key}' values of all records and "
                f"write the total (an integer) to /app/answer.txt. Some records keep '{key}' inside a nested 'stats' "
                "object: count those too. A record without the field, or with null, adds nothing."
            )
            program = (
                "import json\n"
                "total = 0\n"
                "for line in open('/app/data/records.jsonl'):\n"
                "    if line.strip():\n"
                "        record = json.loads(line)\n"
                f"        value = record.get('{key}', (record.get('stats') or {{}}).get('{key}'))\n"
                "        total += value or 0\n"
                "print(total)\n"
            )
        else:
            path = "data/records.json"
            text = json.dumps(records, indent=2) + "\n"
            instruction = (
                f"/app/data/records.json is a JSON array of records. Write the sum of their '{key}' fields to "
                "/app/answer.txt (just the integer)."
            )
            program = f"import json\nprint(sum(r['{key}'] for r in json.load(open('/app/data/records.json'))))\n"
        solution = f"#!/bin/bash\npython3 - > /app/answer.txt <<'EOF'\n{program}EOF\n"
        tests = test_module({"EXPECTED": total, "DATA": f"/app/{path}", "DATA_SHA256": sha256_text(text)}, TESTS)
        return InstanceParts(
            title=f"Sum the {key} field",
            instruction=instruction,
            category="data-processing",
            test_source=tests,
            test_weights={"test_answer_is_an_integer": 0.5, "test_sum_is_close": 1.5, "test_sum_is_right": 2.0},
            guards=["test_guard_data_unchanged"],
            outputs=["/app/answer.txt"],
            solution=solution,
            files={path: text},
            tags=["json"],
            parameters={"records": len(records), "expected": total},
        )
