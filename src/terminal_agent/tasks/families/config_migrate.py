"""Family ``config-migrate``: merge per-service config files of one format into one file of another.

/app/old holds one file per service (``api.ini``, ``db.ini`` ... or ``.json`` / ``.toml``); the agent
writes /app/new/config.EXT in the target format, renaming keys by a table given in the prompt.
The key is the pair ``source>target``.

easy: the values keep their type; renames only.
medium: also a deprecated key to drop from every service, INI values to type (numbers and
``true``/``false`` become numbers and booleans in JSON and TOML), and a value to convert from
milliseconds to seconds.
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

PAIRS = (
    "ini>json", "ini>toml", "ini>env", "json>ini", "json>env", "json>toml", "toml>json", "toml>ini",
    "toml>env", "ini>ini-sections", "json>json-flat",
)
SERVICES = ("api", "db", "cache", "worker", "gateway", "search", "mailer", "billing")
RENAMES = {
    "host": "address", "port": "listen_port", "user": "username", "debug": "verbose", "workers": "concurrency",
    "logfile": "log_path", "retries": "max_retries", "region": "zone",
}
HOSTS = ("10.0.0.5", "db.internal", "cache.local", "0.0.0.0", "127.0.0.1", "svc.example")
USERS = ("app", "svc", "deploy", "ops")
REGIONS = ("eu-west", "us-east", "ap-south")
DEPRECATED = "legacy_mode"


def _service(rng: random.Random, medium: bool) -> dict[str, object]:
    keys = rng.sample(sorted(RENAMES), 5)
    keys = list(dict.fromkeys(["host", "port", *[k for k in keys if k not in ("host", "port")]]))[:5]
    values: dict[str, object] = {}
    for key in keys:
        if key == "host":
            values[key] = rng.choice(HOSTS)
        elif key == "port":
            values[key] = rng.randrange(1024, 65000)
        elif key == "user":
            values[key] = rng.choice(USERS)
        elif key == "debug":
            values[key] = rng.random() < 0.5
        elif key in ("workers", "retries"):
            values[key] = rng.randrange(1, 33)
        elif key == "logfile":
            values[key] = f"/var/log/{rng.choice(USERS)}-{rng.randrange(100)}.log"
        else:
            values[key] = rng.choice(REGIONS)
    values["name_tag"] = f"svc-{rng.randrange(1000)}"  # a key that keeps its name
    if medium:
        values["timeout_ms"] = rng.randrange(1, 60) * 1000
        values[DEPRECATED] = rng.random() < 0.5
    return values


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)


def _write_source(fmt: str, values: dict[str, object], service: str) -> str:
    if fmt == "ini":
        return f"[{service}]\n" + "".join(f"{k} = {_scalar(v)}\n" for k, v in values.items())
    if fmt == "json":
        return json.dumps(values, indent=2) + "\n"
    return "".join(f"{k} = {_toml_value(v)}\n" for k, v in values.items())


def _migrated(values: dict[str, object], medium: bool) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in values.items():
        if medium and key == DEPRECATED:
            continue
        if medium and key == "timeout_ms":
            assert isinstance(value, int)  # _service draws it as a whole number of milliseconds
            out["timeout_s"] = value // 1000
            continue
        out[RENAMES.get(key, key)] = value
    return out


TESTS = SHA256_HELPER + '''
import configparser
import json
import tomllib


def _scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _load():
    text = Path(OUTPUT).read_text()
    if TARGET == "json":
        data = json.loads(text)
        return {name: data["services"][name] for name in data["services"]}
    if TARGET == "json-flat":
        data = json.loads(text)
        services = {}
        for dotted, value in data.items():
            name, key = dotted.split(".", 1)
            services.setdefault(name, {})[key] = value
        return services
    if TARGET == "toml":
        return tomllib.loads(text)
    if TARGET in ("ini", "ini-sections"):
        parser = configparser.ConfigParser(interpolation=None)
        parser.optionxform = str
        parser.read_string(text)
        return {name: dict(parser[name]) for name in parser.sections()}
    services = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            name, value = line.split("=", 1)
            service, key = name.split("_", 1)
            services.setdefault(service.lower(), {})[key.lower()] = value
    return services


def _expected(values):
    if TARGET in ("json", "json-flat", "toml"):
        return values
    return {key: _scalar(value) for key, value in values.items()}


def test_keys_are_renamed():
    loaded = _load()
    assert sorted(loaded) == sorted(EXPECTED), "every service, and no other"
    wrong = {name: sorted(set(loaded.get(name, {})) ^ set(keys)) for name, keys in EXPECTED.items()
             if set(loaded.get(name, {})) != set(keys)}
    assert not wrong, wrong


def test_values_are_carried_over():
    loaded = _load()
    for name, values in EXPECTED.items():
        got = loaded[name]
        for key, value in _expected(values).items():
            found = got.get(key, got.get(OLD_NAMES.get(key, key)))
            assert found == value and type(found) is type(value), (name, key, found, value)


def test_converted_values():
    loaded = _load()
    checked = 0
    for name, values in EXPECTED.items():
        for key in TYPED:
            if key in values:
                value = _expected(values)[key]
                found = loaded[name].get(key)
                assert found == value and type(found) is type(value), (name, key, found, value)
                checked += 1
    assert checked


def test_guard_old_files_unchanged():
    for path, digest in OLD_HASHES.items():
        assert sha256_of(path) == digest, path
'''


def _solution(source: str, target: str, medium: bool) -> str:
    return f"""#!/bin/bash
mkdir -p /app/new
python3 - <<'EOF'
import configparser, glob, json, os, tomllib
SOURCE, TARGET, MEDIUM = {source!r}, {target!r}, {medium!r}
RENAMES = {RENAMES!r}
def typed(text):
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.isdigit() else text
services = {{}}
for path in sorted(glob.glob("/app/old/*." + SOURCE)):
    name = os.path.basename(path).rsplit(".", 1)[0]
    if SOURCE == "ini":
        parser = configparser.ConfigParser(interpolation=None)
        parser.optionxform = str
        parser.read(path)
        values = {{k: typed(v) for k, v in parser[name].items()}}
    elif SOURCE == "json":
        values = json.load(open(path))
    else:
        values = tomllib.load(open(path, "rb"))
    out = {{}}
    for key, value in values.items():
        if MEDIUM and key == "legacy_mode":
            continue
        if MEDIUM and key == "timeout_ms":
            out["timeout_s"] = value // 1000
            continue
        out[RENAMES.get(key, key)] = value
    services[name] = out
def scalar(v):
    return ("true" if v else "false") if isinstance(v, bool) else str(v)
def toml_value(v):
    return scalar(v) if isinstance(v, (bool, int)) else json.dumps(v)
if TARGET == "json":
    text = json.dumps({{"services": services}}, indent=2) + "\\n"
elif TARGET == "json-flat":
    text = json.dumps({{f"{{n}}.{{k}}": v for n, vals in services.items() for k, v in vals.items()}}, indent=2) + "\\n"
elif TARGET == "toml":
    text = "".join(f"[{{n}}]\\n" + "".join(f"{{k}} = {{toml_value(v)}}\\n" for k, v in vals.items()) + "\\n" for n, vals in services.items())
elif TARGET in ("ini", "ini-sections"):
    text = "".join(f"[{{n}}]\\n" + "".join(f"{{k}} = {{scalar(v)}}\\n" for k, v in vals.items()) + "\\n" for n, vals in services.items())
else:
    text = "".join(f"{{n.upper()}}_{{k.upper()}}={{scalar(v)}}\\n" for n, vals in services.items() for k, v in vals.items())
ext = {{"json-flat": "json", "ini-sections": "ini"}}.get(TARGET, TARGET)
open(f"/app/new/config.{{ext}}", "w").write(text)
EOF
"""


FORMAT_NOTES = {
    "json": 'a JSON object {"services": {"SERVICE": {"key": value, ...}, ...}}',
    "json-flat": 'one flat JSON object whose keys are "SERVICE.key" (e.g. "api.address") with the values',
    "toml": "TOML with one table [SERVICE] per service",
    "ini": "INI with one section [SERVICE] per service and 'key = value' lines (booleans as true/false)",
    "ini-sections": "INI with one section [SERVICE] per service, the sections in any order, and 'key = value' lines "
                    "(booleans as true/false)",
    "env": "an env file: one line SERVICE_KEY=value per setting, names in upper case (e.g. API_ADDRESS=10.0.0.5), "
           "no quotes, booleans as true/false",
}


class ConfigMigrate(TaskFamily):
    name = "config-migrate"
    summary = "Merge per-service config files into one file of another format, renaming keys by a table."
    keys = PAIRS
    key_meaning = "the source and target format (source>target)"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        source, target = key.split(">")
        ext = {"json-flat": "json", "ini-sections": "ini"}.get(target, target)
        output = f"/app/new/config.{ext}"
        services = sorted(rng.sample(SERVICES, rng.randrange(3, 6) if medium else 3))
        files: dict[str, str] = {}
        expected: dict[str, dict[str, object]] = {}
        for service in services:
            values = _service(rng, medium)
            files[f"old/{service}.{source}"] = _write_source(source, values, service)
            expected[service] = _migrated(values, medium)
        table = ", ".join(f"{old} -> {new}" for old, new in RENAMES.items())
        typed = sorted({k for values in expected.values() for k, v in values.items() if not isinstance(v, str)})
        instruction = (
            f"The services' settings live in /app/old, one .{source} file per service (the file name is the service "
            f"name). Migrate them into one file, {output}: {FORMAT_NOTES[target]}. Rename the keys by this table "
            f"(keys not in it keep their name): {table}."
        )
        if medium:
            instruction += (
                f" Also: drop the deprecated key '{DEPRECATED}' everywhere, and replace 'timeout_ms' by 'timeout_s' "
                "holding whole seconds (milliseconds divided by 1000)."
            )
        if target in ("json", "json-flat", "toml"):
            instruction += " Numbers and booleans must be numbers and booleans in the new file, not strings."
        instruction += " Keep /app/old unchanged."
        tests = test_module(
            {
                "TARGET": target,
                "OUTPUT": output,
                "EXPECTED": expected,
                "TYPED": typed if target in ("json", "json-flat", "toml") else ["timeout_s"] if medium else ["listen_port"],
                "OLD_NAMES": {new: old for old, new in RENAMES.items()},
                "OLD_HASHES": {f"/app/{n}": sha256_text(t) for n, t in files.items()},
            },
            TESTS,
        )
        return InstanceParts(
            title=f"Migrate service configs {source} -> {target}",
            instruction=instruction,
            category="config-editing",
            test_source=tests,
            test_weights={
                "test_keys_are_renamed": 1.5,
                "test_values_are_carried_over": 1.5,
                "test_converted_values": 1.0,
            },
            guards=["test_guard_old_files_unchanged"],
            solution=_solution(source, target, medium),
            files=files,
            outputs=[output],
            tags=["config", "migration", source, ext],
            parameters={"services": services, "source": source, "target": target},
        )
