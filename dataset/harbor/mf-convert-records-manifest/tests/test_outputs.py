import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/records/2023/batch01.xml': '86e3c1cf852016d3c33de205588630937a233844be5aceb00dafceb69aaa9ab8', '/app/records/2023/batch05.xml': '25a314febb04a48614c9dcc00c63d67ef317f7a57f808509067a7ea1229e79c4', '/app/records/2023/q4/batch02.xml': 'cdb877e5199ab474004a51ec0cab8a71476951dd0fe3ac539c699b961797deea', '/app/records/2023/q4/batch06.xml': '971b6bd244d7ccd9c73e05fbf8c110ef5b8da707c5ae6e0d5a07505a3e1f8485', '/app/records/2024/batch03.xml': '9f2ebf64cb4b5a0618fbfc53a0402dc655ae292acc39fca8da0c4522be44fc87', '/app/records/batch00.xml': '399768e69c388f97b1a73e16c214edb02bcb28a710a4958c3025276668146b09', '/app/records/batch04.xml': '1cbaacdfa71c2bec8c8923101eb3ca8d68a205561d055012b5e005e769b42bee'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import csv
import hashlib

EXPECTED = {'batch00.json': [{'id': 'R0001', 'city': 'Malmö', 'qty': 8, 'active': False, 'tags': [], 'note': ''}], '2023/batch01.json': [{'id': 'R0100', 'city': 'Porto', 'qty': 19, 'active': True, 'tags': ['bulk', 'red'], 'note': 'ok', 'weight_kg': '59.5'}, {'id': 'R0101', 'city': 'Cork', 'qty': 10, 'active': False, 'tags': ['blue'], 'note': 'ok'}, {'id': 'R0102', 'city': 'Zürich', 'qty': 24, 'active': True, 'tags': [], 'note': 'handle <with> care'}, {'id': 'R0103', 'city': 'Porto', 'qty': 17, 'active': False, 'tags': ['red'], 'note': 'handle <with> care'}], '2023/q4/batch02.json': [{'id': 'R0200', 'city': 'Lyon', 'qty': 44, 'active': False, 'tags': ['bulk'], 'note': 'ok', 'weight_kg': '49.6'}, {'id': 'R0201', 'city': 'Lyon', 'qty': 46, 'active': True, 'tags': ['bulk'], 'note': 'handle <with> care', 'weight_kg': '48.5'}, {'id': 'R0202', 'city': 'Malmö', 'qty': 17, 'active': True, 'tags': ['blue', 'a&b'], 'note': '5 > 3 & 2 < 4'}], '2024/batch03.json': [{'id': 'R0300', 'city': 'Zürich', 'qty': 20, 'active': False, 'tags': [], 'note': 'handle <with> care', 'weight_kg': '34.0'}, {'id': 'R0302', 'city': 'Malmö', 'qty': 22, 'active': True, 'tags': ['a&b'], 'note': 'handle <with> care', 'weight_kg': '33.4'}], 'batch04.json': [{'id': 'R0400', 'city': 'Porto', 'qty': 8, 'active': False, 'tags': ['a&b', 'blue'], 'note': '5 > 3 & 2 < 4', 'weight_kg': '15.0'}, {'id': 'R0401', 'city': 'Lyon', 'qty': 38, 'active': False, 'tags': ['a&b'], 'note': '', 'weight_kg': '17.7'}, {'id': 'R0402', 'city': 'Porto', 'qty': 10, 'active': False, 'tags': ['red', 'a&b'], 'note': '', 'weight_kg': '5.2'}, {'id': 'R0403', 'city': 'Zürich', 'qty': 29, 'active': False, 'tags': [], 'note': '5 > 3 & 2 < 4', 'weight_kg': '52.8'}], '2023/batch05.json': [{'id': 'R0500', 'city': 'Lyon', 'qty': 25, 'active': False, 'tags': ['a&b', 'bulk'], 'note': 'handle <with> care'}, {'id': 'R0501', 'city': 'Zürich', 'qty': 45, 'active': False, 'tags': ['bulk', 'fragile'], 'note': 'ok'}, {'id': 'R0502', 'city': 'Malmö', 'qty': 23, 'active': False, 'tags': ['fragile', 'blue'], 'note': '', 'weight_kg': '19.8'}], '2023/q4/batch06.json': [{'id': 'R0600', 'city': 'Gdańsk', 'qty': 46, 'active': True, 'tags': ['blue'], 'note': 'ok'}, {'id': 'R0601', 'city': 'Zürich', 'qty': 26, 'active': False, 'tags': ['a&b', 'blue'], 'note': 'handle <with> care'}, {'id': 'R0602', 'city': 'Gdańsk', 'qty': 23, 'active': False, 'tags': [], 'note': '', 'weight_kg': '89.1'}, {'id': 'R0603', 'city': 'Porto', 'qty': 4, 'active': True, 'tags': [], 'note': 'handle <with> care'}]}
LATIN = '2024/batch03.json'


def _json(rel):
    return json.loads(Path("/app/out", rel).read_text(encoding="utf-8"))


def test_one_json_file_per_xml_file():
    got = sorted(p.relative_to("/app/out").as_posix() for p in Path("/app/out").rglob("*.json"))
    assert got == sorted(EXPECTED)


def test_records_and_types():
    for rel, records in EXPECTED.items():
        if rel != LATIN:
            assert _json(rel) == records, rel


def test_latin1_file_decoded():
    records = _json(LATIN)
    assert records == EXPECTED[LATIN]
    assert any(ch in json.dumps(records, ensure_ascii=False) for ch in "öü")


def test_manifest():
    with open("/app/out/manifest.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["path", "records", "sha256"]
    assert [r[0] for r in rows[1:]] == sorted(EXPECTED)
    for path, count, digest in rows[1:]:
        assert int(count) == len(EXPECTED[path])
        assert digest == hashlib.sha256(Path("/app/out", path).read_bytes()).hexdigest()


def test_records_unchanged():
    assert all(unchanged(path) for path in ORIGINAL_SHA256)
