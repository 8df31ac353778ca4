#!/bin/bash
python3 - <<'EOF'
def read(path):
    pairs = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            key, value = line.split("=", 1)
            pairs[key] = value
    return pairs


merged = read("/app/defaults.env")
merged.update(read("/app/overrides.env"))
open("/app/.env", "w").write("".join(f"{k}={v}\n" for k, v in merged.items()))
EOF
