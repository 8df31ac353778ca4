import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/invoicing/README.md': '87ffbf079900e200b080cc905c1a595f8d1dfefb9a2aa57b0bc3a297034bf84e', '/app/invoicing/invoicing/__init__.py': '06a5c0ad08258f856485d088d767a593e627dca02f16bfe34215996716e47d37', '/app/invoicing/invoicing/lines.py': 'a9330d73bbe34d0374ba03f7c8c50fb95d1067125a4b7a1d8fc9becded6332a5', '/app/invoicing/invoicing/money.py': '17e01235c5587b71d722a6810cb480b7773fcdb3c5c3ff9d88b5dfd12277118b', '/app/invoicing/invoicing/tax.py': 'f171a392783ffacc792b718fea2a6f1f360888b103e9176042d9823a68b38f75', '/app/invoicing/invoicing/totals.py': '08885848c9b483098e4d099289bd3cb109ca8ce7c6bf780a432063f2a21a50e6', '/app/invoicing/tests/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/invoicing/tests/test_lines.py': 'f2e761b8ef16a857227d2ddcb9eb893d5fbc375664ff912e7eac73fedd20a9d9', '/app/invoicing/tests/test_money.py': '0246acabad6f21f954abbb88b67f7b46d01cffc438a88fa7731d59ee4e5744e3', '/app/invoicing/tests/test_tax.py': '22212645bbaef57ae2649fdfa374d78ca143d4e8777f3a3be050e47e8ad2fb6c', '/app/invoicing/tests/test_totals.py': '5b6cf4e0fdaf5f3a8652f917a5510373a3b40153c45f1b522c6d164175a36090'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import shutil
import sys

CHECK = '\nimport json, random, sys\nfrom decimal import Decimal, ROUND_HALF_UP\nsys.path.insert(0, "/app/invoicing")\nfrom invoicing.money import to_money, format_money\nfrom invoicing.lines import parse_lines\nfrom invoicing.tax import rate_for\nfrom invoicing.totals import invoice\n\ndef m(v):\n    return Decimal(str(v)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n\nout = {}\nout["neg"] = str(to_money("-2.675"))\nout["fmt"] = format_money(Decimal("-1234567.005"))\nout["rate"] = str(rate_for("ISLANDS\\t", "tools"))\nrng = random.Random(int(sys.argv[1]))\nrows, subtotal, tax = [], Decimal(0), Decimal(0)\nregion = rng.choice(["north", "South", " islands "])\nrates = {"north": Decimal("0.20"), "south": Decimal("0.10"), "islands": Decimal("0.05")}\nfor i in range(60):\n    qty = rng.randint(1, 5000)\n    price = Decimal(rng.randint(1, 99999)) / 100\n    disc = rng.choice(["", "5%", "12.5%", "33%"])\n    cat = rng.choice(["tools", "books", "food", "toys"])\n    qty_text = f"{qty:,}" if rng.random() < 0.5 else str(qty)\n    rows.append(f"S{i};{cat.upper() if i % 7 == 0 else cat};{qty_text};{price};{disc}")\n    gross = m(qty * price)\n    net = m(gross * (1 - (Decimal(disc[:-1]) / 100 if disc else 0)))\n    subtotal += net\n    tax += m(net * (0 if cat in ("books", "food") else rates[region.strip().lower()]))\ngot = invoice(parse_lines("\\n".join(rows)), region)\nout["invoice_ok"] = got == {"subtotal": subtotal, "tax": tax, "total": subtotal + tax}\nout["invoice"] = {k: str(v) for k, v in got.items()}\nprint(json.dumps(out))\n'


def _suite(tmp_path, name):
    # The pristine suite (a copy beside these tests), run against the package in /app/invoicing.
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copy(Path(__file__).parent / "suite" / f"{name[:-3]}.unittest", folder / name)
    env = dict(os.environ, PYTHONPATH="/app/invoicing")
    result = subprocess.run([sys.executable, "-m", "unittest", "-v", name[:-3]], cwd=folder, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert " ok" in result.stderr


def test_money_suite(tmp_path):
    _suite(tmp_path, "test_money.py")


def test_lines_suite(tmp_path):
    _suite(tmp_path, "test_lines.py")


def test_tax_suite(tmp_path):
    _suite(tmp_path, "test_tax.py")


def test_totals_suite(tmp_path):
    _suite(tmp_path, "test_totals.py")


def test_fresh_invoices_and_edge_cases():
    for seed in (1, 2):
        result = run(sys.executable, "-c", CHECK, str(seed), timeout=60)
        assert result.returncode == 0, result.stderr[-3000:]
        out = json.loads(result.stdout)
        assert out["neg"] == "-2.68"
        assert out["fmt"] == "-1,234,567.01"
        assert out["rate"] == "0.05"
        assert out["invoice_ok"], out["invoice"]


def test_suite_unchanged():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/invoicing/tests/"):
            assert unchanged(path), path
