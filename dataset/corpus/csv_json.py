"""CSV and JSON wrangling."""

from __future__ import annotations

import csv
import io
import json
import random

from _spec import Spec

_rng = random.Random(202)

_people_csv = "id,name,age,city\n1,Ana,34,Lisbon\n2,Bo,27,Oslo\n3,\"Chen, Wei\",45,Taipei\n4,Dara,19,\n5,Émile,61,Lyon\n"
_people_jsonl = [
    {"id": 1, "name": "Ana", "age": 34, "city": "Lisbon"},
    {"id": 2, "name": "Bo", "age": 27, "city": "Oslo"},
    {"id": 3, "name": "Chen, Wei", "age": 45, "city": "Taipei"},
    {"id": 4, "name": "Dara", "age": 19, "city": None},
    {"id": 5, "name": "Émile", "age": 61, "city": "Lyon"},
]

_nested = {
    "service": {"name": "billing", "replicas": 3, "ports": {"http": 8080, "admin": 9090}},
    "db": {"host": "db.internal", "pool": {"min": 2, "max": 10}},
    "debug": False,
    "tags": ["a", "b"],
}
_flat = {
    "service.name": "billing", "service.replicas": 3, "service.ports.http": 8080, "service.ports.admin": 9090,
    "db.host": "db.internal", "db.pool.min": 2, "db.pool.max": 10, "debug": False, "tags": ["a", "b"],
}

_customers = "customer_id,name\nc1,Ana\nc2,Bo\nc3,Chen\nc4,Dara\n"
_orders = "order_id,customer_id,total\no1,c2,10.50\no2,c1,3.00\no3,c2,4.25\no4,c9,99.00\no5,c3,7.75\n"
_joined = [
    "order_id,name,total", "o1,Bo,10.50", "o2,Ana,3.00", "o3,Bo,4.25", "o5,Chen,7.75",
]

_order_events = []
_by_customer: dict[str, int] = {}
for _i in range(40):
    _c = _rng.choice(["ana", "bo", "chen", "dara", "emil"])
    _qty, _price = _rng.randrange(1, 5), _rng.randrange(100, 2000)
    _order_events.append({"order": _i, "customer": _c, "items": [{"qty": _qty, "price_cents": _price}]})
    if _rng.random() < 0.3:
        _q2, _p2 = _rng.randrange(1, 3), _rng.randrange(50, 500)
        _order_events[-1]["items"].append({"qty": _q2, "price_cents": _p2})
        _by_customer[_c] = _by_customer.get(_c, 0) + _q2 * _p2
    _by_customer[_c] = _by_customer.get(_c, 0) + _qty * _price

_dupes_rows = ["sku,name,qty", "A1,bolt,10", "B2,nut,5", "A1,bolt,10", "C3,washer,7", "B2,nut,5", "B2,nut,6", "A1,bolt,10"]
_deduped = ["sku,name,qty", "A1,bolt,10", "B2,nut,5", "C3,washer,7", "B2,nut,6"]

_records = []
_invalid = []
for _i in range(30):
    _r = {"id": f"r{_i:02d}", "email": f"user{_i}@example.org", "age": _rng.randrange(10, 90), "roles": ["user"]}
    _fault = _rng.random()
    if _fault < 0.12:
        del _r["email"]
        _invalid.append(_r["id"])
    elif _fault < 0.22:
        _r["age"] = str(_r["age"])
        _invalid.append(_r["id"])
    elif _fault < 0.3:
        _r["roles"] = "admin"
        _invalid.append(_r["id"])
    elif _fault < 0.36:
        _r["age"] = -1
        _invalid.append(_r["id"])
    _records.append(_r)

_wide = "name,email,phone,city\nAna,ana@example.org,555-0101,Lisbon\nBo,bo@example.org,555-0102,Oslo\nChen,chen@example.org,555-0103,Taipei\n"
_reordered = ["city,name,email", "Lisbon,Ana,ana@example.org", "Oslo,Bo,bo@example.org", "Taipei,Chen,chen@example.org"]

_users = [{"name": n, "active": a, "team": t} for n, a, t in [
    ("ana", True, "core"), ("bo", False, "core"), ("chen", True, "web"), ("dara", True, "core"), ("emil", False, "web"),
]]
_active_core = ["ana", "dara"]

TASKS = [
    Spec(
        task_id="csv-to-jsonl",
        title="Convert a CSV file to JSON Lines",
        difficulty="easy",
        category="data-processing",
        instruction="""
Convert /app/people.csv (with a header row) to /app/people.jsonl: one JSON object per row, keys from the
header, `id` and `age` as integers, the other values as strings, and an empty cell as `null`. Keep the row order.
""",
        files={"people.csv": _people_csv},
        tests=f'''
EXPECTED = {_people_jsonl!r}


def _rows():
    return [json.loads(line) for line in Path("/app/people.jsonl").read_text().splitlines() if line.strip()]


def test_one_object_per_row():
    assert len(_rows()) == len(EXPECTED)


def test_types():
    rows = _rows()
    assert len(rows) == len(EXPECTED)
    assert all(isinstance(r["id"], int) and isinstance(r["age"], int) and isinstance(r["name"], str) for r in rows)


def test_empty_cell_is_null_and_quotes_kept():
    rows = _rows()
    assert len(rows) == len(EXPECTED)
    assert rows[3]["city"] is None and rows[2]["name"] == "Chen, Wei" and rows[4]["name"] == "Émile"


def test_values_exact():
    assert _rows() == EXPECTED
''',
        weights={"test_one_object_per_row": 0.5, "test_types": 1.0, "test_empty_cell_is_null_and_quotes_kept": 1.0,
                 "test_values_exact": 2.0},
        solution='''python3 - <<'EOF'
import csv
import json

with open("/app/people.csv", newline="", encoding="utf-8") as src, open("/app/people.jsonl", "w", encoding="utf-8") as dst:
    for row in csv.DictReader(src):
        record = {k: (v if v != "" else None) for k, v in row.items()}
        record["id"], record["age"] = int(record["id"]), int(record["age"])
        dst.write(json.dumps(record, ensure_ascii=False) + "\\n")
EOF''',
        tags=["csv", "json"],
    ),
    Spec(
        task_id="flatten-json-config",
        title="Flatten a nested JSON document",
        difficulty="medium",
        category="data-processing",
        instruction="""
Flatten /app/config.json into /app/flat.json: a single JSON object whose keys are the dotted paths of every
leaf of the input (`{"a": {"b": 1}}` becomes `{"a.b": 1}`). Lists are leaves (kept as they are), and values
keep their JSON types.
""",
        files={"config.json": json.dumps(_nested, indent=2) + "\n"},
        tests=f'''
EXPECTED = {_flat!r}


def _flat():
    return json.loads(Path("/app/flat.json").read_text())


def test_is_a_flat_object():
    flat = _flat()
    assert isinstance(flat, dict) and flat and not any(isinstance(v, dict) for v in flat.values())
    assert flat.get("tags") == ["a", "b"], "a list is a leaf"


def test_keys():
    assert sorted(_flat()) == sorted(EXPECTED)


def test_values_and_types():
    assert _flat() == EXPECTED
''',
        weights={"test_is_a_flat_object": 0.5, "test_keys": 1.5, "test_values_and_types": 1.5},
        solution='''python3 - <<'EOF'
import json


def flatten(value, prefix, out):
    if isinstance(value, dict):
        for key, item in value.items():
            flatten(item, f"{prefix}.{key}" if prefix else key, out)
    else:
        out[prefix] = value
    return out


data = json.load(open("/app/config.json"))
json.dump(flatten(data, "", {}), open("/app/flat.json", "w"), indent=2)
EOF''',
        tags=["json"],
    ),
    Spec(
        task_id="join-orders-customers",
        title="Join orders with customers",
        difficulty="medium",
        category="data-processing",
        instruction="""
Join /app/orders.csv with /app/customers.csv on `customer_id` and write /app/report.csv with the header
`order_id,name,total` and one row per order, in the order of orders.csv. Orders whose customer is unknown
are left out. Copy `total` as it is written.
""",
        files={"customers.csv": _customers, "orders.csv": _orders},
        tests=f'''
EXPECTED = {_joined!r}


def _lines():
    return Path("/app/report.csv").read_text().splitlines()


def test_header():
    assert _lines()[0] == EXPECTED[0]


def test_known_orders_joined():
    assert set(EXPECTED[1:]) <= set(_lines())


def test_exact_report():
    assert _lines() == EXPECTED
''',
        weights={"test_header": 0.5, "test_known_orders_joined": 2.0, "test_exact_report": 1.0},
        solution='''awk -F, 'NR == FNR { if (FNR > 1) name[$1] = $2; next }
FNR == 1 { print "order_id,name,total"; next }
($2 in name) { print $1 "," name[$2] "," $3 }' /app/customers.csv /app/orders.csv > /app/report.csv''',
        tags=["csv", "awk", "join"],
        one_command=True,
    ),
    Spec(
        task_id="group-orders-by-customer",
        title="Revenue per customer",
        difficulty="medium",
        category="data-processing",
        instruction="""
/app/orders.json is a JSON array of orders; each has a `customer` and a list of `items` with `qty` and
`price_cents`. Write /app/revenue.json: a JSON object mapping each customer to the total of qty × price_cents
over all their orders (integers), with the keys sorted.
""",
        files={"orders.json": json.dumps(_order_events, indent=1) + "\n"},
        tests=f'''
EXPECTED = {dict(sorted(_by_customer.items()))!r}


def _got():
    return json.loads(Path("/app/revenue.json").read_text())


def test_customers():
    assert sorted(_got()) == sorted(EXPECTED)


def test_totals():
    assert _got() == EXPECTED


def test_keys_sorted_and_integers():
    got = _got()
    assert list(got) == sorted(EXPECTED) and all(type(v) is int for v in got.values())
''',
        weights={"test_customers": 1.0, "test_totals": 2.0, "test_keys_sorted_and_integers": 0.5},
        solution='''python3 - <<'EOF'
import json

totals = {}
for order in json.load(open("/app/orders.json")):
    totals[order["customer"]] = totals.get(order["customer"], 0) + sum(i["qty"] * i["price_cents"] for i in order["items"])
json.dump(dict(sorted(totals.items())), open("/app/revenue.json", "w"), indent=2)
EOF''',
        tags=["json"],
    ),
    Spec(
        task_id="dedupe-csv-rows",
        title="Remove duplicate rows",
        difficulty="easy",
        category="data-processing",
        instruction="""
/app/stock.csv contains exact duplicate rows. Write /app/stock_unique.csv with the header and each distinct
row once, at the position of its first occurrence.
""",
        files={"stock.csv": "\n".join(_dupes_rows) + "\n"},
        tests=f'''
EXPECTED = {_deduped!r}


def _lines():
    return Path("/app/stock_unique.csv").read_text().splitlines()


def test_no_duplicates():
    lines = _lines()
    assert lines[:1] == EXPECTED[:1], "the header first"
    assert len(lines) == len(set(lines))


def test_same_distinct_rows():
    # each row as often as it should be (once): a copy of the input, duplicates and all, earns nothing
    assert sorted(_lines()) == sorted(EXPECTED)


def test_first_occurrence_order():
    assert _lines() == EXPECTED
''',
        weights={"test_no_duplicates": 1.0, "test_same_distinct_rows": 1.5, "test_first_occurrence_order": 1.5},
        solution="awk '!seen[$0]++' /app/stock.csv > /app/stock_unique.csv",
        tags=["awk", "csv"],
        one_command=True,
    ),
    Spec(
        task_id="validate-json-records",
        title="Find the invalid records",
        difficulty="medium",
        category="data-processing",
        instruction="""
/app/records.json is a JSON array of user records. A record is valid when it has: `id` (string), `email`
(a string containing `@`), `age` (an integer, not a boolean, between 0 and 150) and `roles` (a list of
strings). Write the ids of the invalid records to /app/invalid.txt, one per line, in file order.
""",
        files={"records.json": json.dumps(_records, indent=2) + "\n"},
        tests=f'''
EXPECTED = {_invalid!r}


def _got():
    return Path("/app/invalid.txt").read_text().split()


def test_every_invalid_found():
    assert set(EXPECTED) <= set(_got())


def test_no_valid_record_reported():
    got = _got()
    assert got and set(got) <= set(EXPECTED)


def test_order():
    assert _got() == EXPECTED
''',
        weights={"test_every_invalid_found": 1.5, "test_no_valid_record_reported": 1.5, "test_order": 0.5},
        solution='''python3 - <<'EOF'
import json


def valid(r):
    age = r.get("age")
    return (
        isinstance(r.get("id"), str)
        and isinstance(r.get("email"), str) and "@" in r["email"]
        and isinstance(age, int) and not isinstance(age, bool) and 0 <= age <= 150
        and isinstance(r.get("roles"), list) and all(isinstance(x, str) for x in r["roles"])
    )


with open("/app/invalid.txt", "w") as out:
    for record in json.load(open("/app/records.json")):
        if not valid(record):
            out.write(str(record.get("id")) + "\\n")
EOF''',
        tags=["json", "validation"],
    ),
    Spec(
        task_id="reorder-csv-columns",
        title="Reorder CSV columns",
        difficulty="easy",
        category="data-processing",
        instruction="""
Write /app/contacts_out.csv from /app/contacts.csv with only the columns city, name and email, in that order
(header included). No field of this file contains a comma or a quote.
""",
        files={"contacts.csv": _wide},
        tests=f'''
EXPECTED = {_reordered!r}


def _lines():
    return Path("/app/contacts_out.csv").read_text().splitlines()


def test_header():
    assert _lines()[:1] == EXPECTED[:1]


def test_city_column_first():
    lines = _lines()
    assert len(lines) == len(EXPECTED)
    assert [l.split(",")[0] for l in lines] == [e.split(",")[0] for e in EXPECTED]


def test_rows():
    assert _lines() == EXPECTED


def test_input_unchanged():
    assert unchanged("/app/contacts.csv")
''',
        weights={"test_header": 0.5, "test_city_column_first": 1.0, "test_rows": 2.0},
        guards=["test_input_unchanged"],
        solution="awk -F, -v OFS=, '{print $4, $1, $2}' /app/contacts.csv > /app/contacts_out.csv",
        tags=["awk", "csv"],
        one_command=True,
    ),
    Spec(
        task_id="select-active-users",
        title="Active members of a team",
        difficulty="easy",
        category="data-processing",
        instruction="""
/app/users.json is a JSON array of users with `name`, `active` (boolean) and `team`. Write the names of the
active users of team `core` to /app/core_active.txt, one per line, in file order.
""",
        files={"users.json": json.dumps(_users, indent=2) + "\n"},
        tests=f'''
EXPECTED = {_active_core!r}


def _got():
    return Path("/app/core_active.txt").read_text().split()


def test_only_active_core_members():
    got = _got()
    assert got and set(got) <= set(EXPECTED)


def test_names():
    assert sorted(_got()) == sorted(EXPECTED)


def test_order_and_nothing_else():
    assert _got() == EXPECTED
''',
        weights={"test_only_active_core_members": 1.0, "test_names": 2.0, "test_order_and_nothing_else": 1.0},
        solution="""python3 -c 'import json; print("\\n".join(u["name"] for u in json.load(open("/app/users.json")) if u["active"] and u["team"] == "core"))' > /app/core_active.txt""",
        tags=["json"],
        one_command=True,
    ),
]
