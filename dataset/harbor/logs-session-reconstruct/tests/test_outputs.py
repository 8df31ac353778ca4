import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/logs/cart.log': '84a5459a772a94cd6aebd0041f33ff2ea3059c6f5893b3553cbdc672a64bcae9', '/app/logs/catalog.log': '39b42f4fc7eef15c4c9d603c6a82368898033028553f04f153d249f807f88053', '/app/logs/gateway.log': '30e86daf065150cfa7e99833bf4a1c0000acddf9b0e4fbe5d406b6c604611d89', '/app/logs/payments.log': '4e82f5dd05ba7b6208388d752bb91db6638e3a2bed503b758275855de4390dd2'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


TRUTH = [{'rid': 'r-d637d8f2', 'time': '2024-07-01T09:58:04.476Z', 'method': 'GET', 'path': '/catalog', 'status': 200, 'services': ['catalog']}, {'rid': 'r-4983b117', 'time': '2024-07-01T09:58:10.418Z', 'method': 'GET', 'path': '/catalog/item/311', 'status': 200, 'services': ['catalog']}, {'rid': 'r-a1773963', 'time': '2024-07-01T09:58:12.573Z', 'method': 'POST', 'path': '/cart/items', 'status': 201, 'services': ['cart']}, {'rid': 'r-804b2962', 'time': '2024-07-01T09:58:18.088Z', 'method': 'GET', 'path': '/cart', 'status': 200, 'services': ['cart', 'catalog']}, {'rid': 'r-41a81490', 'time': '2024-07-01T09:58:44.597Z', 'method': 'POST', 'path': '/checkout', 'status': 502, 'services': ['cart', 'payments', 'risk']}, {'rid': 'r-16a50459', 'time': '2024-07-01T09:58:51.276Z', 'method': 'GET', 'path': '/catalog', 'status': 200, 'services': ['catalog']}, {'rid': 'r-cfbba094', 'time': '2024-07-01T09:58:54.592Z', 'method': 'GET', 'path': '/catalog/item/311', 'status': 200, 'services': ['catalog']}]
ROOT = {'failed_request': 'r-41a81490', 'service': 'risk', 'message': 'risk engine timed out after 3000 ms'}


def _session():
    return [json.loads(line) for line in Path("/app/session.jsonl").read_text().splitlines() if line.strip()]


def test_session_requests():
    got = _session()
    assert sorted(r.get("rid") for r in got) == sorted(r["rid"] for r in TRUTH)


def test_order_and_utc_times():
    got = _session()
    assert [(r.get("rid"), r.get("time")) for r in got] == [(r["rid"], r["time"]) for r in TRUTH]


def test_request_lines_and_status():
    got = _session()
    assert [(r.get("method"), r.get("path"), r.get("status")) for r in got] == [(r["method"], r["path"], r["status"]) for r in TRUTH]


def test_services_per_request():
    got = _session()
    assert len(got) == len(TRUTH)
    assert [r.get("services") for r in got] == [r["services"] for r in TRUTH]


def test_root_cause():
    data = json.loads(Path("/app/root_cause.json").read_text())
    assert data == ROOT


def test_logs_unchanged():
    assert all(unchanged(path) for path in ORIGINAL_SHA256)
