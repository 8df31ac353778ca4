#!/bin/bash
python3 - <<'EOF'
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
            out.write(str(record.get("id")) + "\n")
EOF
