import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/README.md': '16ba3029552cfb68e1d0206847763eac3f1450381c4a946eba0f58093e46e84d', '/app/out/report.csv': 'd6529d37de054135d871a7fa27b6914647d004a8ca037469d81f36940d416c08', '/app/pipeline/extract.py': 'ab93b8f81451f88d0bd373147e4c62de27aaeee64883baf1d549f62a59720331', '/app/pipeline/load.py': '92ab71305930b1ae2fbfd0f069218d2e2929e90c2d491c30c0fa6774ce50b37f', '/app/pipeline/transform.py': 'd7d9ac580c2a157557fc50d105cf26578e820529531497b6292612ecb7984f5c', '/app/raw/e01_2024-01.csv': '3ae95e7a3218e32dcbe5f866a3a1af91b1a11454c22169da344d9f645ccc98cf', '/app/raw/e01_2024-02.csv': '6fa42713213e3548c8fb2b917792760a89c637b5ce61789798ea80ad2293c175', '/app/raw/e01_2024-03.csv': '6f40485f24ddf0faf36a76d713dbad8b624a4c9882dc340219a9c8930f6758b7', '/app/raw/n01_2024-01.csv': '983bffb37c6e9341372b47b282a298c142bb24dfd758631781b8e5d65b751563', '/app/raw/n01_2024-02.csv': 'a53e638271730b9df94d97b996a6b7766b291c74561ac4f89cfda3b046d26316', '/app/raw/n01_2024-03.csv': '646fd109a29ab462571ac1cc18ac7743a6915f1c0a2ab56a94a877e85523807f', '/app/raw/n02_2024-01.csv': '34f11e18cf716692e31e4b7d9174e95583ebd1ccface3284bf719c1a253c13d5', '/app/raw/n02_2024-02.csv': 'cbef98504bf5f777f3bd9597e1d96d2a973522cb0626c818ae00f60c32c63d3b', '/app/raw/n02_2024-03.csv': '0ae02e2a4d1524a43148819a039760023111ff5b3403bf767897256641fcec32', '/app/raw/s01_2024-01.csv': 'e5fced549b6167ba6c1e7f8d6e9293ec5490d6b8e469439bf86e569931af9bba', '/app/raw/s01_2024-02.csv': 'acf15d8f953cba69cc4df24d7ef38cb500886a84d60824ed48ae7dc64f02b55c', '/app/raw/s01_2024-03.csv': '08194d6298a52af6126b660f59dc021f54e52a4c3a4b69bde1b5200ccb899d93', '/app/raw/s02_2024-01.csv': 'a171362dbbfecf0cf0c85fc0accf1eafcbbf4ae5ee25d36cf811691d0bd6e8b4', '/app/raw/s02_2024-02.csv': '6f471a7db503b1db307cdf3400e8a5914af73a2c512f860362026a3553cc1b77', '/app/raw/s02_2024-03.csv': 'fd55bcafd6032a8155e4a564ee9ae29ea181a1819c481e605ddb7fb6031625fb', '/app/raw/w01_2024-01.csv': 'abb5c61e19fd68bb03bf4043842f841385b708f67ad426406c99a308724722fb', '/app/raw/w01_2024-02.csv': '80071cd7ad759d82d6d3e6e82b6b5ab146b47f96a101737bd38e76b94a7aef0d', '/app/raw/w01_2024-03.csv': 'c3669d3a2f087ce5d973ea59b38312639c677598129a0b635511d2b75d83ea9a', '/app/raw/x09_2024-01.csv': '6cf7a0ca9993203876fa273393cae01e254b6956d68a265ccc9da23e2da88492', '/app/raw/x09_2024-02.csv': '7221ca8c7fa1a560211e694daa6c062dce8f14ea3da8ffaefb05097ec6e8a68b', '/app/raw/x09_2024-03.csv': '4b0c9e9c5303f184502fe6babf0e0e8fb7bb704d0510285f6b1523c0b36c0015', '/app/ref/rates.json': 'cbc8a7186d9a775fff13747e2173b1cb8fb15915d1cad3a22198e1d7e1baa3e8', '/app/ref/stores.csv': 'd424acd39ce0bd56e775ea43dced415b3a04add74b974430dcc600c83f366c32', '/app/run.sh': 'e29747ad7d0ecf51f150febe5884a55eafc0bb4db9e0d6513936b98ef2d4f58e'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import csv
import shutil

MAIN = [['east', '2024-01', '5', '168606'], ['east', '2024-02', '4', '115048'], ['east', '2024-03', '4', '199481'], ['north', '2024-01', '11', '409148'], ['north', '2024-02', '15', '330511'], ['north', '2024-03', '7', '248318'], ['south', '2024-01', '14', '606123'], ['south', '2024-02', '10', '228715'], ['south', '2024-03', '7', '262418'], ['unassigned', '2024-01', '2', '71578'], ['unassigned', '2024-02', '2', '65631'], ['unassigned', '2024-03', '2', '104527'], ['west', '2024-01', '6', '63452'], ['west', '2024-02', '4', '46914'], ['west', '2024-03', '6', '198851']]
FRESH = [['central', '2024-01', '8', '334193'], ['central', '2024-02', '12', '426347'], ['central', '2024-03', '7', '199064'], ['north', '2024-01', '6', '144449'], ['north', '2024-02', '4', '145977'], ['north', '2024-03', '4', '237870'], ['south', '2024-01', '6', '219706'], ['south', '2024-02', '7', '183876'], ['south', '2024-03', '4', '91936'], ['unassigned', '2024-01', '2', '99282'], ['unassigned', '2024-02', '2', '2079'], ['unassigned', '2024-03', '2', '35128']]


def _report(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows and rows[0] == ["region", "month", "orders", "eur_cents"], rows[:1]
    return rows[1:]


def _fresh(tmp_path):
    out = tmp_path / "out"
    here = Path(__file__).resolve().parent
    proc = run("bash", "/app/run.sh", str(here / "fresh/raw"), str(here / "fresh/ref"), str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return _report(out / "report.csv")


def test_shipped_report_regenerated():
    assert _report("/app/out/report.csv") == MAIN


def test_fresh_order_counts(tmp_path):
    got = _fresh(tmp_path)
    assert [(r[0], r[1], r[2]) for r in got] == [(r[0], r[1], r[2]) for r in FRESH]


def test_fresh_unassigned_orders(tmp_path):
    got = [r for r in _fresh(tmp_path) if r[0] == "unassigned"]
    assert got and [r[:3] for r in got] == [r[:3] for r in FRESH if r[0] == "unassigned"]


def test_fresh_euro_totals(tmp_path):
    assert _fresh(tmp_path) == FRESH


def test_inputs_unchanged():
    assert all(unchanged(path) for path in ORIGINAL_SHA256 if "/raw/" in path or "/ref/" in path)
    assert unchanged("/app/run.sh")
