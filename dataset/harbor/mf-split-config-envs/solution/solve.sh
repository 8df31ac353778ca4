#!/bin/bash
mkdir -p /app/config
python3 - <<'EOF'
import json

data = json.load(open("/app/settings.json"))["environments"]


def common(configs):
    first, rest = configs[0], configs[1:]
    out = {}
    for key, value in first.items():
        if not all(key in c for c in rest):
            continue
        others = [c[key] for c in rest]
        if isinstance(value, dict) and all(isinstance(o, dict) for o in others):
            sub = common([value] + others)
            if sub:
                out[key] = sub
        elif all(o == value and type(o) is type(value) for o in others):
            out[key] = value
    return out


def diff(full, base):
    out = {}
    for key, value in full.items():
        if key not in base:
            out[key] = value
        elif isinstance(value, dict) and isinstance(base[key], dict):
            sub = diff(value, base[key])
            if sub:
                out[key] = sub
        elif value != base[key] or type(value) is not type(base[key]):
            out[key] = value
    return out


base = common(list(data.values()))
json.dump(base, open("/app/config/base.json", "w"), indent=2, sort_keys=True)
for env, full in data.items():
    json.dump(diff(full, base), open(f"/app/config/{env}.json", "w"), indent=2, sort_keys=True)
EOF
cat > /app/app/config_loader.py <<'PY'
"""Where the application's settings come from: config/base.json merged with config/<env>.json."""

import copy
import json
from pathlib import Path

CONFIG = Path(__file__).resolve().parent.parent / "config"


def _merge(base, override):
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load(env):
    """The full settings of environment ``env`` (KeyError when there is no such environment)."""
    path = CONFIG / f"{env}.json"
    if env == "base" or "/" in env or not path.is_file():
        raise KeyError(env)
    return _merge(json.loads((CONFIG / "base.json").read_text()), json.loads(path.read_text()))
PY
rm /app/settings.json
for env in dev staging prod; do python3 /app/show_config.py --env $env > /dev/null && echo ok $env; done
