import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/basket/__init__.py': 'c069a4fc16c16e42eb1f14aa7fcf5b9ffda9c648bfa711e92007eabebadbcda6', '/app/basket/cli.py': '92cf9f361b77cf3bdf088acd6e8ceb54a2c549b7a861009de4564c444407e593', '/app/basket/core.py': 'd09afc09d536ab905e8c46356a7abdd0c3b1839c07bbfab643197e07c1a77b44', '/app/basket/render.py': '216673f3bc1e087ff9b916140d49f8ff3819e41801d3b7173f79a4ba071d34a3', '/app/docs/API.md': '9c885724bc36431417813475b71e18df55d8b24f9c2a1703b49b3f2e9c4ca3b9', '/app/samples/b1.json': '61b33273cbef07e79bd1632b8418bd52f3b4ad5808fc453cb6fbe4e4ba6bd01b', '/app/unit_tests/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/unit_tests/test_core.py': '32f1a8a88ceb757c0a8b94269bcc43f32ccf284dcb6aa89a550bda48e49b2a0a', '/app/unit_tests/test_render.py': '343391d141a23a32f20b6a016524f33f2578075673054540007c5d020ace52cc'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import re

CASES = [([(2, 1000), (1, 250)], 0.2, 0), ([(7, 333), (2, 1)], 0.15, 120), ([(1, 100)], 0.0, 500), ([(4, 2499)], 0.075, 0)]


def _expected(lines, rate, discount):
    from decimal import ROUND_HALF_UP, Decimal
    subtotal = sum(q * p for q, p in lines)
    tax = int((Decimal(subtotal) * Decimal(str(rate))).quantize(Decimal("1"), ROUND_HALF_UP))
    return max(0, subtotal + tax - discount)


def _python(code):
    return run("python3", "-W", "error::DeprecationWarning", "-c", code, cwd="/app")


def test_new_name_works():
    code = ("import json, basket\nfrom basket.core import compute_basket_total\n"
            f"cases = {CASES!r}\n"
            "print(json.dumps([compute_basket_total(l, r, d) for l, r, d in cases]))\n"
            "print(json.dumps([basket.compute_basket_total(l, r, d) for l, r, d in cases]))\n"
            "print(json.dumps(basket.recalc_totals([{'id': 'a', 'lines': [(1, 100)]}], 0.1)))\n")
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    first, second, third = proc.stdout.splitlines()
    want = [_expected(*case) for case in CASES]
    assert json.loads(first) == want and json.loads(second) == want
    assert json.loads(third) == {"a": 110}


def test_deprecated_alias_warns():
    code = ("import warnings, basket, basket.core\n"
            "for f in (basket.calc_total, basket.core.calc_total):\n"
            "    with warnings.catch_warnings(record=True) as seen:\n"
            "        warnings.simplefilter('always')\n"
            "        print(f([(2, 1000)], 0.2, 100))\n"
            "    assert any(issubclass(w.category, DeprecationWarning) for w in seen), seen\n"
            "from basket.core import compute_basket_total\n")
    proc = run("python3", "-c", code, cwd="/app")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2300", "2300"]


def test_old_name_gone_elsewhere():
    offenders = []
    for path in Path("/app").rglob("*"):
        if path.is_file() and path.suffix in (".py", ".md") and "__pycache__" not in path.parts:
            if path.relative_to("/app").as_posix() in ("basket/core.py", "basket/__init__.py"):
                continue
            if re.search(r"\bcalc_total\b", path.read_text()):
                offenders.append(str(path))
    assert not offenders, offenders
    assert "compute_basket_total" in Path("/app/docs/API.md").read_text()
    proc = run("python3", "-W", "error::DeprecationWarning", "-m", "basket.cli", "total", "/app/samples/b1.json", cwd="/app")
    assert proc.returncode == 0 and proc.stdout.strip() == str(_expected([(3, 1250), (1, 999)], 0.2, 300)), proc.stderr
    proc = run("python3", "-W", "error::DeprecationWarning", "-m", "basket.cli", "render", "/app/samples/b1.json", cwd="/app")
    assert proc.returncode == 0, proc.stderr


def test_project_tests_pass_on_the_new_name():
    assert "compute_basket_total" in Path("/app/unit_tests/test_core.py").read_text()
    assert "compute_basket_total" in Path("/app/unit_tests/test_render.py").read_text()
    proc = run("python3", "-W", "error::DeprecationWarning", "-m", "unittest", "discover", "-s", "unit_tests", "-t", ".",
               cwd="/app", timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Ran 5 tests" in proc.stderr


def test_look_alike_names_kept():
    code = ("from basket.core import calc_total_tax, recalc_totals\n"
            "from basket import calc_total_tax as t2\n"
            "print(calc_total_tax([(1, 333)], 0.15), t2([(10, 100)], 0.2), recalc_totals([{'id': 'b', 'lines': [(3, 10)], 'discount_cents': 5}], 0.1))\n")
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "50 200 {'b': 28}"
    proc = run("python3", "-m", "basket.cli", "tax", "/app/samples/b1.json", cwd="/app")
    assert proc.returncode == 0 and proc.stdout.strip() == "950", proc.stderr
