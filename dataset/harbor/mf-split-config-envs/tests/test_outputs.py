import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/app/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/app/config_loader.py': '8e391b8704cc58b0c4f9b16cd7bc357ae8c044c84babe6f0e441e0bc16040dee', '/app/settings.json': '3faffb5ed0581a7e1e3394cdc42e300b9fbe34362a9608e7744def1d73824374', '/app/show_config.py': '2cfbc97852cec039556bcea54d0f11e7c939932d19a2af4ae58be1dc5cc38c31'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


SETTINGS = {'dev': {'app': {'name': 'ledger', 'port': 8000, 'workers': 1, 'debug': True, 'secret_env': 'LEDGER_SECRET'}, 'db': {'host': 'localhost', 'port': 5432, 'name': 'ledger_dev', 'pool': {'min': 1, 'max': 5, 'timeout_s': 30}}, 'cache': {'backend': 'memory', 'ttl_s': 60}, 'features': ['export', 'beta-ui'], 'logging': {'level': 'DEBUG', 'format': 'text', 'file': None}, 'debug_toolbar': True}, 'staging': {'app': {'name': 'ledger', 'port': 8000, 'workers': 4, 'debug': False, 'secret_env': 'LEDGER_SECRET'}, 'db': {'host': 'db.staging.internal', 'port': 5432, 'name': 'ledger', 'pool': {'min': 1, 'max': 10, 'timeout_s': 30}}, 'cache': {'backend': 'redis', 'ttl_s': 60, 'url': 'redis://cache.staging.internal:6379/0'}, 'features': ['export'], 'logging': {'level': 'INFO', 'format': 'json', 'file': None}}, 'prod': {'app': {'name': 'ledger', 'port': 8000, 'workers': 16, 'debug': False, 'secret_env': 'LEDGER_SECRET'}, 'db': {'host': 'db.prod.internal', 'port': 5432, 'name': 'ledger', 'pool': {'min': 4, 'max': 40, 'timeout_s': 30}, 'replica': 'db-ro.prod.internal'}, 'cache': {'backend': 'redis', 'ttl_s': 300, 'url': 'redis://cache.prod.internal:6379/0'}, 'features': ['export'], 'logging': {'level': 'WARNING', 'format': 'json', 'file': '/var/log/ledger/app.log'}}}
BASE = {'app': {'name': 'ledger', 'port': 8000, 'secret_env': 'LEDGER_SECRET'}, 'db': {'port': 5432, 'pool': {'timeout_s': 30}}}
OVERRIDES = {'dev': {'app': {'workers': 1, 'debug': True}, 'db': {'host': 'localhost', 'name': 'ledger_dev', 'pool': {'min': 1, 'max': 5}}, 'cache': {'backend': 'memory', 'ttl_s': 60}, 'features': ['export', 'beta-ui'], 'logging': {'level': 'DEBUG', 'format': 'text', 'file': None}, 'debug_toolbar': True}, 'staging': {'app': {'workers': 4, 'debug': False}, 'db': {'host': 'db.staging.internal', 'name': 'ledger', 'pool': {'min': 1, 'max': 10}}, 'cache': {'backend': 'redis', 'ttl_s': 60, 'url': 'redis://cache.staging.internal:6379/0'}, 'features': ['export'], 'logging': {'level': 'INFO', 'format': 'json', 'file': None}}, 'prod': {'app': {'workers': 16, 'debug': False}, 'db': {'host': 'db.prod.internal', 'name': 'ledger', 'pool': {'min': 4, 'max': 40}, 'replica': 'db-ro.prod.internal'}, 'cache': {'backend': 'redis', 'ttl_s': 300, 'url': 'redis://cache.prod.internal:6379/0'}, 'features': ['export'], 'logging': {'level': 'WARNING', 'format': 'json', 'file': '/var/log/ledger/app.log'}}}
QA = {'db': {'name': 'ledger_qa', 'pool': {'max': 7}}, 'features': ['export', 'qa-tools'], 'app': {'workers': 2}}


def _merge(base, override):
    import copy
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _show(env):
    return run("python3", "/app/show_config.py", "--env", env, cwd="/")


def test_effective_settings_unchanged_without_settings_json():
    assert not Path("/app/settings.json").exists()
    for env, want in SETTINGS.items():
        proc = _show(env)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == want, env


def test_base_holds_the_common_settings():
    assert json.loads(Path("/app/config/base.json").read_text()) == BASE


def test_environment_files_hold_only_differences():
    for env, want in OVERRIDES.items():
        assert json.loads(Path(f"/app/config/{env}.json").read_text()) == want, env


def test_a_new_environment_is_one_small_file():
    qa = Path("/app/config/qa.json")
    qa.write_text(json.dumps(QA))
    try:
        proc = _show("qa")
        assert proc.returncode == 0, proc.stderr
        base = json.loads(Path("/app/config/base.json").read_text())
        assert json.loads(proc.stdout) == _merge(base, QA)
        assert json.loads(proc.stdout)["db"]["pool"]["timeout_s"] == 30
    finally:
        qa.unlink()
    proc = _show("nosuchenv")
    assert proc.returncode == 2 and "unknown environment" in proc.stderr


def test_show_config_unchanged():
    assert unchanged("/app/show_config.py")
