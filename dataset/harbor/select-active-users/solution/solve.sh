#!/bin/bash
python3 -c 'import json; print("\n".join(u["name"] for u in json.load(open("/app/users.json")) if u["active"] and u["team"] == "core"))' > /app/core_active.txt
