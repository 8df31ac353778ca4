#!/bin/bash
python3 - <<'EOF'
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
EOF
