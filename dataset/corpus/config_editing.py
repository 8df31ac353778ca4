"""Configuration editing."""

from __future__ import annotations

import json

from _spec import Spec

_INI = """[server]
host = 0.0.0.0
port = 8000

; the database section
[database]
url = postgres://db/app
pool = 5
"""

_DEFAULTS = "# defaults\nAPP_ENV=development\nLOG_LEVEL=info\nPORT=8000\nFEATURE_X=off\n"
_OVERRIDES = "LOG_LEVEL=debug\n# enable x in staging\nFEATURE_X=on\nREGION=eu-west\n"
_MERGED = ["APP_ENV=development", "LOG_LEVEL=debug", "PORT=8000", "FEATURE_X=on", "REGION=eu-west"]

_NGINX = """server {
    listen 80;
    server_name example.org;
    location / {
        proxy_pass http://127.0.0.1:8080;
    }
}

server {
    listen 443 ssl;
    server_name example.org;
}

server {
    listen   80 default_server;
    return 404;
}
"""

_FLAGS = {
    "settings/app.yaml": "name: shop\ndebug: true\nworkers: 4\n",
    "settings/jobs.yaml": "queue: default\ndebug:   true   # noisy\nretries: 3\n",
    "settings/web/site.yaml": "theme: dark\nfeatures:\n  debug: true\n  beta: false\ndebug: yes\n",
    "settings/notes.md": "debug: true is the default in dev\n",
}
_FLAGS_EXPECTED = {
    "/app/settings/app.yaml": "name: shop\ndebug: false\nworkers: 4\n",
    "/app/settings/jobs.yaml": "queue: default\ndebug: false\nretries: 3\n",
    "/app/settings/web/site.yaml": "theme: dark\nfeatures:\n  debug: true\n  beta: false\ndebug: false\n",
}

_APP_CONFIG = {
    "name": "inventory",
    "server": {"port": 8000, "workers": 2, "timeouts": {"read": 30, "write": 30}},
    "features": ["search"],
    "database": {"url": "sqlite:///app.db"},
}
_APP_CONFIG_EXPECTED = {
    "name": "inventory",
    "server": {"port": 9000, "workers": 2, "timeouts": {"read": 30, "write": 60}},
    "features": ["search", "export"],
    "database": {"url": "sqlite:///app.db", "pool_size": 10},
}

_SSHD = """# sshd settings
Port 22
#PermitRootLogin prohibit-password
PermitRootLogin yes
#PasswordAuthentication yes
UsePAM yes
X11Forwarding yes
Match User backup
    PasswordAuthentication yes
"""

TASKS = [
    Spec(
        task_id="ini-add-section",
        title="Add a cache section",
        difficulty="easy",
        category="config-editing",
        instruction="""
Add a section `[cache]` with `backend = redis` and `ttl = 300` to /app/app.ini. Keep all existing sections,
keys and comments as they are.
""",
        files={"app.ini": _INI},
        tests='''
import configparser


def _parser():
    parser = configparser.ConfigParser()
    assert parser.read("/app/app.ini") == ["/app/app.ini"]
    return parser


def test_cache_section_added():
    text = Path("/app/app.ini").read_text()
    assert text.count("[cache]") == 1
    assert _parser().has_section("cache")


def test_cache_backend():
    assert _parser().get("cache", "backend") == "redis"


def test_cache_ttl():
    parser = _parser()
    assert parser.getint("cache", "ttl") == 300
    assert sorted(parser["cache"]) == ["backend", "ttl"]


def test_existing_sections_and_comment_kept():
    parser = _parser()
    assert dict(parser["server"]) == {"host": "0.0.0.0", "port": "8000"}
    assert dict(parser["database"]) == {"url": "postgres://db/app", "pool": "5"}
    assert "; the database section" in Path("/app/app.ini").read_text()
''',
        weights={"test_cache_section_added": 1.0, "test_cache_backend": 1.0, "test_cache_ttl": 1.0},
        guards=["test_existing_sections_and_comment_kept"],
        solution="printf '\\n[cache]\\nbackend = redis\\nttl = 300\\n' >> /app/app.ini",
        tags=["ini"],
        one_command=True,
    ),
    Spec(
        task_id="merge-env-files",
        title="Merge environment files",
        difficulty="medium",
        category="config-editing",
        instruction="""
Merge /app/defaults.env and /app/overrides.env into /app/.env. Both hold `KEY=VALUE` lines and `#` comments.
A key set in overrides.env takes its value from there. The output has no comments or blank lines: first the
keys of defaults.env in their order (with overridden values), then the keys that only overrides.env has, in
its order.
""",
        files={"defaults.env": _DEFAULTS, "overrides.env": _OVERRIDES},
        tests=f'''
EXPECTED = {_MERGED!r}


def _lines():
    return Path("/app/.env").read_text().splitlines()


def test_values():
    pairs = [l.split("=", 1) for l in _lines() if "=" in l]
    assert len({{key for key, _ in pairs}}) == len(pairs), "a key is set twice"
    assert dict(pairs) == dict(l.split("=", 1) for l in EXPECTED)


def test_only_key_value_lines():
    lines = _lines()
    assert len(lines) == len(EXPECTED)
    assert all(l and not l.startswith("#") and "=" in l for l in lines)


def test_order():
    assert _lines() == EXPECTED
''',
        weights={"test_values": 2.0, "test_only_key_value_lines": 1.0, "test_order": 1.0},
        solution='''python3 - <<'EOF'
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
open("/app/.env", "w").write("".join(f"{k}={v}\\n" for k, v in merged.items()))
EOF''',
        tags=["env"],
    ),
    Spec(
        task_id="nginx-listen-port",
        title="Move the HTTP server to port 8081",
        difficulty="easy",
        category="config-editing",
        instruction="""
In /app/nginx.conf, every server that listens on port 80 must listen on port 8081 instead (keep any other
parameters of the `listen` line, such as `default_server`). Do not touch the HTTPS server on 443 or the
proxy_pass address.
""",
        files={"nginx.conf": _NGINX},
        tests=f'''
import re

ORIGINAL = {_NGINX!r}


def _text():
    return Path("/app/nginx.conf").read_text()


def _listens():
    return [" ".join(l.split()) for l in _text().splitlines() if l.split()[:1] == ["listen"]]


def test_port_80_gone():
    listens = _listens()
    assert len(listens) == 3 and "listen 443 ssl;" in listens
    assert not re.search(r"listen\\s+80\\b", _text())


def test_first_server_on_8081():
    assert _listens()[0] == "listen 8081;"


def test_default_server_on_8081():
    assert _listens()[2] == "listen 8081 default_server;"


def test_rest_unchanged():
    def normal(text):
        return [" ".join(l.split()) for l in text.splitlines() if l.strip()]

    original = normal(ORIGINAL)
    now = [l.replace("listen 8081", "listen 80") for l in normal(_text())]
    assert now == original
''',
        weights={"test_port_80_gone": 1.0, "test_first_server_on_8081": 1.0, "test_default_server_on_8081": 1.0},
        guards=["test_rest_unchanged"],
        solution="sed -i -E 's/(listen[[:space:]]+)80\\b/\\18081/' /app/nginx.conf",
        tags=["sed", "nginx"],
        held_out=True,
        one_command=True,
    ),
    Spec(
        task_id="disable-debug-flags",
        title="Turn debug off",
        difficulty="medium",
        category="config-editing",
        instruction="""
Every YAML file (`*.yaml`) under /app/settings that sets the top-level key `debug` (a line starting with
`debug:`) must set it to `false`, written exactly as `debug: false` (drop any trailing comment). Nested keys
named `debug` (indented) stay as they are, other lines stay byte-for-byte the same, and non-YAML files are
not touched.
""",
        files=_FLAGS,
        tests=f'''
EXPECTED = {_FLAGS_EXPECTED!r}


def _exact(path):
    assert Path(path).read_text() == EXPECTED[path], path


def test_app_yaml():
    _exact("/app/settings/app.yaml")


def test_jobs_yaml_comment_dropped():
    _exact("/app/settings/jobs.yaml")


def test_site_yaml_nested_key_kept():
    _exact("/app/settings/web/site.yaml")


def test_notes_untouched():
    assert unchanged("/app/settings/notes.md")
''',
        weights={"test_app_yaml": 1.0, "test_jobs_yaml_comment_dropped": 1.0, "test_site_yaml_nested_key_kept": 1.5},
        guards=["test_notes_untouched"],
        solution="find /app/settings -type f -name '*.yaml' -exec sed -i -E 's/^debug:.*$/debug: false/' {} +",
        tags=["sed", "yaml"],
        one_command=True,
    ),
    Spec(
        task_id="update-json-config",
        held_out=True,
        title="Update a JSON configuration",
        difficulty="medium",
        category="config-editing",
        instruction="""
Edit /app/config.json: set `server.port` to 9000 and `server.timeouts.write` to 60, append `"export"` to the
`features` list, and add `database.pool_size` = 10. Everything else keeps its value; the file must stay valid
JSON, indented with 2 spaces.
""",
        files={"config.json": json.dumps(_APP_CONFIG, indent=2) + "\n"},
        tests=f'''
EXPECTED = {_APP_CONFIG_EXPECTED!r}


def _config():
    return json.loads(Path("/app/config.json").read_text())


def test_server_changes():
    server = _config()["server"]
    assert server["port"] == 9000 and server["timeouts"]["write"] == 60


def test_features_and_pool():
    config = _config()
    assert config["features"] == ["search", "export"] and config["database"]["pool_size"] == 10


def test_everything_else_and_indent():
    assert _config() == EXPECTED
    assert Path("/app/config.json").read_text().startswith('{{\\n  "name"')
''',
        weights={"test_server_changes": 1.5, "test_features_and_pool": 1.5, "test_everything_else_and_indent": 1.0},
        solution='''python3 - <<'EOF'
import json

path = "/app/config.json"
config = json.load(open(path))
config["server"]["port"] = 9000
config["server"]["timeouts"]["write"] = 60
config["features"].append("export")
config["database"]["pool_size"] = 10
open(path, "w").write(json.dumps(config, indent=2) + "\\n")
EOF''',
        tags=["json"],
    ),
    Spec(
        task_id="harden-sshd-config",
        title="Harden an sshd configuration",
        difficulty="medium",
        category="config-editing",
        instruction="""
Edit /app/sshd_config so that, in the global part of the file (before the first `Match` line), there is
exactly one active `PermitRootLogin no` and exactly one active `PasswordAuthentication no`, and no other
active setting of those two keys. Lines inside the `Match` block must stay as they are, and so must all
other settings. Commented lines (`#...`) may stay or go.
""",
        files={"sshd_config": _SSHD},
        tests='''
def _global_lines():
    lines = Path("/app/sshd_config").read_text().splitlines()
    end = next((i for i, l in enumerate(lines) if l.strip().startswith("Match")), len(lines))
    return [l.strip() for l in lines[:end] if l.strip() and not l.strip().startswith("#")], lines[end:]


def test_root_login_disabled():
    active, _ = _global_lines()
    assert [l for l in active if l.split()[0] == "PermitRootLogin"] == ["PermitRootLogin no"]


def test_passwords_disabled():
    active, _ = _global_lines()
    assert [l for l in active if l.split()[0] == "PasswordAuthentication"] == ["PasswordAuthentication no"]


def test_match_block_kept():
    active, match = _global_lines()
    assert "PasswordAuthentication no" in active
    assert match == ["Match User backup", "    PasswordAuthentication yes"]


def test_other_settings_kept():
    active, _ = _global_lines()
    others = [l for l in active if l.split()[0] not in ("PermitRootLogin", "PasswordAuthentication")]
    assert others == ["Port 22", "UsePAM yes", "X11Forwarding yes"]
''',
        weights={"test_root_login_disabled": 1.0, "test_passwords_disabled": 1.0, "test_match_block_kept": 1.0},
        guards=["test_other_settings_kept"],
        solution='''python3 - <<'EOF'
from pathlib import Path

path = Path("/app/sshd_config")
lines = path.read_text().splitlines()
end = next((i for i, l in enumerate(lines) if l.strip().startswith("Match")), len(lines))
head = [l for l in lines[:end] if l.split()[:1] not in (["PermitRootLogin"], ["PasswordAuthentication"])]
head += ["PermitRootLogin no", "PasswordAuthentication no"]
path.write_text("\\n".join(head + lines[end:]) + "\\n")
EOF''',
        tags=["sshd", "security"],
    ),
]
