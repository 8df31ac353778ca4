"""Multi-step work across several files: a rename through a small codebase, a config split per environment, a
three-stage pipeline with one broken stage, a directory of records converted with a manifest, translation
catalogues brought in line with their source."""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import json
import random
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

from _spec import Spec

# --------------------------------------------------------------------------------------------------------------
# 1. mf-rename-function: calc_total -> compute_basket_total across a package, its tests, docs and a string
#    dispatch table; a deprecated alias stays; look-alike names must survive.

_CORE_PY = '''"""Basket arithmetic. Amounts are integer cents; lines are (quantity, unit price in cents)."""

from decimal import ROUND_HALF_UP, Decimal


def _cents(value):
    return int(Decimal(value).quantize(Decimal("1"), ROUND_HALF_UP))


def calc_total_tax(lines, tax_rate):
    """Tax on the lines, in cents (rounded half up)."""
    subtotal = sum(qty * price for qty, price in lines)
    return _cents(Decimal(subtotal) * Decimal(str(tax_rate)))


def calc_total(lines, tax_rate=0.0, discount_cents=0):
    """Total of one basket in cents: the lines, plus tax, less a discount (never below zero)."""
    subtotal = sum(qty * price for qty, price in lines)
    return max(0, subtotal + calc_total_tax(lines, tax_rate) - discount_cents)


def recalc_totals(baskets, tax_rate):
    """Totals of many baskets: {basket id: total in cents}."""
    return {bk["id"]: calc_total(bk["lines"], tax_rate, bk.get("discount_cents", 0)) for bk in baskets}
'''
_INIT_PY = '''"""Shopping-basket arithmetic."""

from .core import calc_total, calc_total_tax, recalc_totals

__all__ = ["calc_total", "calc_total_tax", "recalc_totals"]
'''
_RENDER_PY = '''"""Plain-text rendering of a basket."""

from .core import calc_total, calc_total_tax


def render(basket, tax_rate):
    lines = [f"Basket {basket['id']}"]
    for qty, price in basket["lines"]:
        lines.append(f"  {qty} x {price / 100:.2f}")
    lines.append(f"  tax {calc_total_tax(basket['lines'], tax_rate) / 100:.2f}")
    total = calc_total(basket["lines"], tax_rate, basket.get("discount_cents", 0))
    lines.append(f"  total {total / 100:.2f}")
    return "\\n".join(lines)
'''
_CLI_PY = '''"""python3 -m basket.cli COMMAND BASKET.json [TAX_RATE]: print one number (cents) or the rendering."""

import json
import sys

from basket import core
from basket.render import render

COMMANDS = {"total": "calc_total", "tax": "calc_total_tax"}


def main(argv):
    command, path = argv[0], argv[1]
    tax_rate = float(argv[2]) if len(argv) > 2 else 0.2
    basket = json.load(open(path))
    if command == "render":
        print(render(basket, tax_rate))
    elif command == "total":
        print(getattr(core, COMMANDS[command])(basket["lines"], tax_rate, basket.get("discount_cents", 0)))
    elif command == "tax":
        print(getattr(core, COMMANDS[command])(basket["lines"], tax_rate))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
'''
_TEST_CORE_PY = '''import unittest

from basket.core import calc_total, calc_total_tax, recalc_totals


class TotalsTest(unittest.TestCase):
    def test_total_with_tax(self):
        self.assertEqual(calc_total([(2, 1000), (1, 250)], 0.2), 2700)

    def test_discount_never_negative(self):
        self.assertEqual(calc_total([(1, 100)], 0.0, discount_cents=500), 0)

    def test_tax_rounding(self):
        self.assertEqual(calc_total_tax([(1, 333)], 0.15), 50)

    def test_many(self):
        baskets = [{"id": "a", "lines": [(1, 100)]}, {"id": "b", "lines": [(3, 10)], "discount_cents": 5}]
        self.assertEqual(recalc_totals(baskets, 0.1), {"a": 110, "b": 28})


if __name__ == "__main__":
    unittest.main()
'''
_TEST_RENDER_PY = '''import unittest

from basket import calc_total
from basket.render import render


class RenderTest(unittest.TestCase):
    def test_render_ends_with_total(self):
        basket = {"id": "x1", "lines": [(1, 1999)]}
        text = render(basket, 0.2)
        self.assertTrue(text.endswith(f"total {calc_total(basket['lines'], 0.2) / 100:.2f}"))


if __name__ == "__main__":
    unittest.main()
'''
_API_MD = '''# basket: API

- `calc_total(lines, tax_rate=0.0, discount_cents=0)`: total of one basket in cents.
- `calc_total_tax(lines, tax_rate)`: the tax alone.
- `recalc_totals(baskets, tax_rate)`: `{id: total}` for many baskets; it calls `calc_total` for each.

The command line: `python3 -m basket.cli total basket.json 0.2`.
'''
_RENAME_FILES = {
    "basket/__init__.py": _INIT_PY,
    "basket/core.py": _CORE_PY,
    "basket/render.py": _RENDER_PY,
    "basket/cli.py": _CLI_PY,
    "unit_tests/__init__.py": "",
    "unit_tests/test_core.py": _TEST_CORE_PY,
    "unit_tests/test_render.py": _TEST_RENDER_PY,
    "docs/API.md": _API_MD,
    "samples/b1.json": json.dumps({"id": "b1", "lines": [[3, 1250], [1, 999]], "discount_cents": 300}) + "\n",
}

_RENAME_SOLUTION = r"""cd /app
for f in basket/render.py basket/cli.py basket/core.py unit_tests/test_core.py unit_tests/test_render.py docs/API.md basket/__init__.py; do
  sed -i -E 's/\bcalc_total\b/compute_basket_total/g' "$f"
done
cat >> basket/core.py <<'PY'


def calc_total(lines, tax_rate=0.0, discount_cents=0):
    # the deprecated name of compute_basket_total
    import warnings

    warnings.warn("calc_total is deprecated; use compute_basket_total", DeprecationWarning, stacklevel=2)
    return compute_basket_total(lines, tax_rate, discount_cents)
PY
cat > basket/__init__.py <<'PY'
# Shopping-basket arithmetic.

from .core import calc_total, calc_total_tax, compute_basket_total, recalc_totals

__all__ = ["compute_basket_total", "calc_total_tax", "recalc_totals", "calc_total"]
PY
python3 -W error::DeprecationWarning -m unittest discover -s unit_tests -t . -v
python3 -m basket.cli total samples/b1.json
"""

_RENAME_TESTS = r'''
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
'''

_RENAME = Spec(
    task_id="mf-rename-function",
    title="Rename a function across a small codebase and keep its tests passing",
    difficulty="medium",
    category="multi-file",
    limits={"agent_timeout_s": 900},
    instruction="""
/app is a small Python package, `basket`, with its tests (run with
`python3 -m unittest discover -s unit_tests -t .` from /app), docs and a command line (`python3 -m basket.cli`).

Rename the function `calc_total` to `compute_basket_total` everywhere it is used or named: the code, the
tests, the docs and the command line, and export the new name from the package (`from basket import
compute_basket_total`). Old callers must keep working for now: `basket.calc_total` and
`basket.core.calc_total` remain as deprecated aliases that emit a `DeprecationWarning` and return the same
result. Apart from that alias (in `basket/core.py` and its re-export in `basket/__init__.py`) no file
mentions `calc_total` any more, and nothing inside the package or its tests calls the deprecated alias (the tests
must pass with `-W error::DeprecationWarning`).

Other functions with similar names (`calc_total_tax`, `recalc_totals`) keep their names and behaviour.
""",
    files=_RENAME_FILES,
    tests=_RENAME_TESTS,
    weights={"test_new_name_works": 1.5, "test_deprecated_alias_warns": 1.0, "test_old_name_gone_elsewhere": 1.5,
             "test_project_tests_pass_on_the_new_name": 1.5},
    guards=["test_look_alike_names_kept"],
    solution=_RENAME_SOLUTION,
    harbor=True,
    tags=["refactoring", "python", "rename", "multi-file"],
)


# --------------------------------------------------------------------------------------------------------------
# 2. mf-split-config-envs: one settings file with three full environments -> base + per-environment overrides,
#    and the loader changed to merge them.

_SETTINGS = {
    "dev": {
        "app": {"name": "ledger", "port": 8000, "workers": 1, "debug": True, "secret_env": "LEDGER_SECRET"},
        "db": {"host": "localhost", "port": 5432, "name": "ledger_dev", "pool": {"min": 1, "max": 5, "timeout_s": 30}},
        "cache": {"backend": "memory", "ttl_s": 60},
        "features": ["export", "beta-ui"],
        "logging": {"level": "DEBUG", "format": "text", "file": None},
        "debug_toolbar": True,
    },
    "staging": {
        "app": {"name": "ledger", "port": 8000, "workers": 4, "debug": False, "secret_env": "LEDGER_SECRET"},
        "db": {"host": "db.staging.internal", "port": 5432, "name": "ledger", "pool": {"min": 1, "max": 10, "timeout_s": 30}},
        "cache": {"backend": "redis", "ttl_s": 60, "url": "redis://cache.staging.internal:6379/0"},
        "features": ["export"],
        "logging": {"level": "INFO", "format": "json", "file": None},
    },
    "prod": {
        "app": {"name": "ledger", "port": 8000, "workers": 16, "debug": False, "secret_env": "LEDGER_SECRET"},
        "db": {"host": "db.prod.internal", "port": 5432, "name": "ledger", "pool": {"min": 4, "max": 40, "timeout_s": 30},
               "replica": "db-ro.prod.internal"},
        "cache": {"backend": "redis", "ttl_s": 300, "url": "redis://cache.prod.internal:6379/0"},
        "features": ["export"],
        "logging": {"level": "WARNING", "format": "json", "file": "/var/log/ledger/app.log"},
    },
}


def _common(configs):
    first, rest = configs[0], configs[1:]
    out = {}
    for key, value in first.items():
        if not all(key in c for c in rest):
            continue
        others = [c[key] for c in rest]
        if isinstance(value, dict) and all(isinstance(o, dict) for o in others):
            sub = _common([value] + others)
            if sub:
                out[key] = sub
        elif all(o == value and type(o) is type(value) for o in others):
            out[key] = value
    return out


def _diff(full, base):
    out = {}
    for key, value in full.items():
        if key not in base:
            out[key] = value
        elif isinstance(value, dict) and isinstance(base[key], dict):
            sub = _diff(value, base[key])
            if sub:
                out[key] = sub
        elif value != base[key] or type(value) is not type(base[key]):
            out[key] = value
    return out


def _merge(base, override):
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


_BASE = _common(list(_SETTINGS.values()))
_OVERRIDES = {env: _diff(cfg, _BASE) for env, cfg in _SETTINGS.items()}
assert all(_merge(_BASE, _OVERRIDES[env]) == cfg for env, cfg in _SETTINGS.items())
_QA = {"db": {"name": "ledger_qa", "pool": {"max": 7}}, "features": ["export", "qa-tools"], "app": {"workers": 2}}

_LOADER_PY = '''"""Where the application's settings come from."""

import json
from pathlib import Path

SETTINGS = Path(__file__).resolve().parent.parent / "settings.json"


def load(env):
    """The full settings of environment ``env`` (KeyError when there is no such environment)."""
    data = json.loads(SETTINGS.read_text())
    return data["environments"][env]
'''
_SHOW_PY = '''"""python3 /app/show_config.py --env ENV: print the effective settings of ENV as JSON."""

import argparse
import json
import sys

sys.path.insert(0, "/app")
from app.config_loader import load  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", required=True)
    args = parser.parse_args()
    try:
        settings = load(args.env)
    except KeyError:
        print(f"unknown environment: {args.env}", file=sys.stderr)
        return 2
    print(json.dumps(settings, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_NEW_LOADER_PY = '''"""Where the application's settings come from: config/base.json merged with config/<env>.json."""

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
'''

_SPLIT_TESTS = f'''
SETTINGS = {_SETTINGS!r}
BASE = {_BASE!r}
OVERRIDES = {_OVERRIDES!r}
QA = {_QA!r}


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
        assert json.loads(Path(f"/app/config/{{env}}.json").read_text()) == want, env


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
'''

_SPLIT_SOLUTION = f"""mkdir -p /app/config
python3 - <<'EOF'
import json

data = json.load(open("/app/settings.json"))["environments"]


def common(configs):
    first, rest = configs[0], configs[1:]
    out = {{}}
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
    out = {{}}
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
    json.dump(diff(full, base), open(f"/app/config/{{env}}.json", "w"), indent=2, sort_keys=True)
EOF
cat > /app/app/config_loader.py <<'PY'
{_NEW_LOADER_PY}PY
rm /app/settings.json
for env in dev staging prod; do python3 /app/show_config.py --env $env > /dev/null && echo ok $env; done
"""

_SPLIT = Spec(
    task_id="mf-split-config-envs",
    title="Split one settings file into a base and per-environment overrides",
    difficulty="medium",
    category="multi-file",
    limits={"agent_timeout_s": 900},
    instruction="""
/app/settings.json holds the complete settings of three environments (`dev`, `staging`, `prod`) under
`environments`, most of them repeated. /app/app/config_loader.py reads it, and `python3 /app/show_config.py
--env ENV` prints an environment's effective settings.

Split it:

1. /app/config/base.json: every setting that is the same in all three environments (compared at every level of
   nesting: a nested object keeps only its common keys; a list or other value is compared as a whole).
2. /app/config/dev.json, staging.json, prod.json: only what that environment changes or adds relative to base.json
   (no setting equal to base.json's, no empty objects).
3. Change /app/app/config_loader.py so that `load(env)` returns base.json deep-merged with config/ENV.json (objects
   merge key by key at every level; any other value replaces base's), and a missing environment file raises
   KeyError as before. Adding an environment must only take a new file in /app/config/.
4. Delete /app/settings.json. `show_config.py` must print exactly what it printed before for each environment;
   do not edit show_config.py.
""",
    files={"settings.json": json.dumps({"environments": _SETTINGS}, indent=2) + "\n", "app/__init__.py": "",
           "app/config_loader.py": _LOADER_PY, "show_config.py": _SHOW_PY},
    tests=_SPLIT_TESTS,
    weights={"test_effective_settings_unchanged_without_settings_json": 2.0, "test_base_holds_the_common_settings": 1.5,
             "test_environment_files_hold_only_differences": 1.5, "test_a_new_environment_is_one_small_file": 1.5},
    guards=["test_show_config_unchanged"],
    solution=_SPLIT_SOLUTION,
    tags=["config", "json", "refactoring", "multi-file"],
)


# --------------------------------------------------------------------------------------------------------------
# 3. mf-pipeline-broken-stage (held out): extract -> transform -> load, the transform stage breaks three of the
#    documented rules; graded on fresh exports, rates and stores.

_STORES = [("N01", "north"), ("N02", "north"), ("S01", "south"), ("S02", "south"), ("E01", "east"), ("W01", "west")]


def _pipeline_data(seed: int, rates: dict[str, str], stores: list[tuple[str, str]], ghost: str):
    rng = random.Random(seed)
    files = {}
    orders = []
    number = 1000 + seed
    for month in ("2024-01", "2024-02", "2024-03"):
        for store_id, _ in stores + [(ghost, None)]:
            rows = ["order_id,store,date,currency,amount"]
            for _ in range(rng.randrange(3, 9) if store_id != ghost else 2):
                number += rng.randrange(1, 5)
                spelling = rng.choice([store_id, store_id.lower(), f" {store_id}", f"{store_id.lower()} "])
                currency = rng.choice(sorted(rates))
                amount = f"{rng.randrange(100, 90000) / 100:.2f}"
                day = rng.randrange(1, 29)
                rows.append(f"o{number},{spelling},{month}-{day:02d},{currency},{amount}")
                orders.append((store_id, month, currency, amount))
            files[f"{store_id.lower()}_{month}.csv"] = "\n".join(rows) + "\n"
    region_of = dict(stores)
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for store_id, month, currency, amount in orders:
        cents = int((Decimal(amount) / Decimal(rates[currency]) * 100).to_integral_value(ROUND_HALF_UP))
        key = (region_of.get(store_id, "unassigned"), month)
        totals[key][0] += 1
        totals[key][1] += cents
    report = [[region, month, str(n), str(c)] for (region, month), (n, c) in sorted(totals.items())]
    stores_csv = "store_id,region\n" + "".join(f"{s},{r}\n" for s, r in stores)
    return files, json.dumps(rates, indent=2) + "\n", stores_csv, report


_pipe_main = _pipeline_data(5, {"EUR": "1", "USD": "1.0850", "GBP": "0.8560", "SEK": "11.2400"}, _STORES, "X09")
_pipe_fresh = _pipeline_data(61, {"EUR": "1", "USD": "1.1020", "CHF": "0.9610", "NOK": "11.7300"},
                             [("N01", "north"), ("C01", "central"), ("C02", "central"), ("S03", "south")], "Z77")

_EXTRACT_PY = '''"""Stage 1: every raw store export (RAW_DIR/*.csv) -> one JSON object per order, values as text."""

import csv
import json
import sys
from pathlib import Path


def main(raw_dir, out_path):
    with open(out_path, "w") as out:
        for path in sorted(Path(raw_dir).glob("*.csv")):
            with open(path, newline="") as handle:
                for row in csv.DictReader(handle):
                    out.write(json.dumps({key: value for key, value in row.items()}) + "\\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''
_TRANSFORM_PY = '''"""Stage 2: orders -> {order_id, region, month, eur_cents} (see README.md for the rules)."""

import csv
import json
import sys


def main(in_path, rates_path, stores_path, out_path):
    rates = json.load(open(rates_path))
    with open(stores_path, newline="") as handle:
        stores = {row["store_id"]: row["region"] for row in csv.DictReader(handle)}
    with open(in_path) as source, open(out_path, "w") as out:
        for line in source:
            order = json.loads(line)
            region = stores.get(order["store"])
            if region is None:
                continue
            eur = float(order["amount"]) * float(rates[order["currency"]])
            out.write(json.dumps({"order_id": order["order_id"], "region": region, "month": order["date"][:7],
                                  "eur_cents": int(eur * 100)}) + "\\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])
'''
_FIXED_TRANSFORM_PY = '''"""Stage 2: orders -> {order_id, region, month, eur_cents} (see README.md for the rules)."""

import csv
import json
import sys
from decimal import ROUND_HALF_UP, Decimal


def main(in_path, rates_path, stores_path, out_path):
    rates = json.load(open(rates_path))
    with open(stores_path, newline="") as handle:
        stores = {row["store_id"].strip().upper(): row["region"] for row in csv.DictReader(handle)}
    with open(in_path) as source, open(out_path, "w") as out:
        for line in source:
            order = json.loads(line)
            region = stores.get(order["store"].strip().upper(), "unassigned")
            eur = Decimal(order["amount"]) / Decimal(str(rates[order["currency"]]))
            cents = int((eur * 100).to_integral_value(ROUND_HALF_UP))
            out.write(json.dumps({"order_id": order["order_id"], "region": region, "month": order["date"][:7],
                                  "eur_cents": cents}) + "\\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])
'''
_LOAD_PY = '''"""Stage 3: transformed orders -> report.csv: region,month,orders,eur_cents (sorted by region, month)."""

import csv
import json
import sys
from collections import defaultdict


def main(in_path, out_path):
    totals = defaultdict(lambda: [0, 0])
    with open(in_path) as source:
        for line in source:
            order = json.loads(line)
            key = (order["region"], order["month"])
            totals[key][0] += 1
            totals[key][1] += order["eur_cents"]
    with open(out_path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["region", "month", "orders", "eur_cents"])
        for (region, month), (count, cents) in sorted(totals.items()):
            out.writerow([region, month, count, cents])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''
_RUN_SH = '''#!/bin/bash
# bash run.sh RAW_DIR REF_DIR OUT_DIR: the three stages, REF_DIR holding rates.json and stores.csv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
raw="$1"; ref="$2"; out="$3"
mkdir -p "$out"
python3 "$here/pipeline/extract.py" "$raw" "$out/stage1.jsonl"
python3 "$here/pipeline/transform.py" "$out/stage1.jsonl" "$ref/rates.json" "$ref/stores.csv" "$out/stage2.jsonl"
python3 "$here/pipeline/load.py" "$out/stage2.jsonl" "$out/report.csv"
'''
_PIPE_README = '''# Monthly sales pipeline

`bash run.sh raw ref out` turns the store exports into `out/report.csv`, in three stages:

1. `pipeline/extract.py`: reads every `raw/*.csv` export (`order_id,store,date,currency,amount`).
2. `pipeline/transform.py`: for every order, its region and its amount in euro cents.
3. `pipeline/load.py`: per region and month, the number of orders and the sum of euro cents.

Rules (agreed with finance):

- Every order counts, exactly once. An order from a store that `ref/stores.csv` does not list belongs to the
  region `unassigned`.
- Store ids are matched ignoring case and surrounding spaces (`" n01"` is store `N01`).
- `ref/rates.json` gives, per currency, how many units of it one euro buys (`"USD": "1.0850"`): an amount in
  USD is divided by 1.0850 to get euros.
- Each order's euro amount is rounded to whole cents, half up, before anything is summed; no binary floating
  point on money.
'''
_pipe_stale_report = "region,month,orders,eur_cents\n" + "".join(f"{r[0]},{r[1]},{int(r[2]) - 1},{int(r[3]) * 2}\n"
                                                                   for r in _pipe_main[3] if r[0] != "unassigned")
_PIPE_FILES = {"run.sh": _RUN_SH, "README.md": _PIPE_README, "pipeline/extract.py": _EXTRACT_PY,
               "pipeline/transform.py": _TRANSFORM_PY, "pipeline/load.py": _LOAD_PY,
               "ref/rates.json": _pipe_main[1], "ref/stores.csv": _pipe_main[2], "out/report.csv": _pipe_stale_report,
               **{f"raw/{name}": text for name, text in _pipe_main[0].items()}}
_PIPE_TEST_FILES = {"fresh/ref/rates.json": _pipe_fresh[1], "fresh/ref/stores.csv": _pipe_fresh[2],
                    **{f"fresh/raw/{name}": text for name, text in _pipe_fresh[0].items()}}

_PIPE_TESTS = f'''
import csv
import shutil

MAIN = {_pipe_main[3]!r}
FRESH = {_pipe_fresh[3]!r}


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
'''

_PIPELINE = Spec(
    task_id="mf-pipeline-broken-stage",
    title="Find and fix the broken stage of a three-script data pipeline",
    difficulty="medium",
    category="multi-file",
    limits={"agent_timeout_s": 1200},
    instruction="""
/app holds a three-stage sales pipeline (`bash /app/run.sh RAW_DIR REF_DIR OUT_DIR`; see /app/README.md for the
stages and the rules finance agreed on). Finance says /app/out/report.csv does not match their numbers: orders are
missing and the euro totals are off.

Find what breaks the documented rules and fix it in the pipeline's scripts, keeping every stage's command line and
file formats. Then run the pipeline again on /app/raw and /app/ref so that /app/out/report.csv is right. The fixed
pipeline will also be run on other exports, rates and store lists. Do not change the inputs (raw/, ref/) or
run.sh.
""",
    files=_PIPE_FILES,
    test_files=_PIPE_TEST_FILES,
    tests=_PIPE_TESTS,
    weights={"test_shipped_report_regenerated": 1.5, "test_fresh_order_counts": 1.5,
             "test_fresh_unassigned_orders": 1.0, "test_fresh_euro_totals": 2.0},
    guards=["test_inputs_unchanged"],
    solution=f"""cat > /app/pipeline/transform.py <<'PY'
{_FIXED_TRANSFORM_PY}PY
bash /app/run.sh /app/raw /app/ref /app/out
cat /app/out/report.csv
""",
    held_out=True,
    tags=["pipeline", "debugging", "python", "money", "multi-file"],
)


# --------------------------------------------------------------------------------------------------------------
# 4. mf-convert-records-manifest: a tree of XML record files (one in Latin-1) -> JSON files and a manifest.

def _records():
    rng = random.Random(2718)
    cities = ["Lyon", "Malmö", "Zürich", "Porto", "Gdańsk", "Cork"]
    tree, expected = {}, {}
    folders = ["", "2023/", "2023/q4/", "2024/"]
    for index in range(7):
        folder = folders[index % len(folders)]
        name = f"{folder}batch{index:02d}.xml"
        latin = index == 3
        body, records = [], []
        for n in range(rng.randrange(2, 6)):
            rid = f"R{index:02d}{n:02d}"
            deleted = rng.random() < 0.2
            city = rng.choice(cities if not latin else ["Malmö", "Zürich", "Lyon"])
            qty = rng.randrange(0, 50)
            active = rng.random() < 0.6
            tags = rng.sample(["red", "blue", "bulk", "fragile", "a&b"], rng.randrange(0, 3))
            note = rng.choice(["", "handle <with> care", "ok", "5 > 3 & 2 < 4"])
            def esc(text):
                return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            fields = [f'    <field name="city">{esc(city)}</field>', f'    <field name="qty" type="int">{qty}</field>',
                      f'    <field name="active" type="bool">{"true" if active else "false"}</field>',
                      '    <field name="tags" type="list">' + "".join(f"<item>{esc(t)}</item>" for t in tags) + "</field>",
                      f'    <field name="note">{esc(note)}</field>']
            if rng.random() < 0.4:
                fields.append(f'    <field name="weight_kg" type="decimal">{rng.randrange(1, 999) / 10}</field>')
            flag = ' deleted="true"' if deleted else ""
            body.append(f'  <record id="{rid}"{flag}>\n' + "\n".join(fields) + "\n  </record>")
            if not deleted:
                record = {"id": rid, "city": city, "qty": qty, "active": active, "tags": tags, "note": note}
                if fields[-1].find("weight_kg") != -1:
                    record["weight_kg"] = fields[-1].split(">")[1].split("<")[0]
                records.append(record)
        encoding = "ISO-8859-1" if latin else "UTF-8"
        text = f'<?xml version="1.0" encoding="{encoding}"?>\n<records>\n' + "\n".join(body) + "\n</records>\n"
        tree[f"records/{name}"] = text.encode("latin-1") if latin else text
        expected[name[:-4] + ".json"] = records
    return tree, expected


_rec_files, _rec_expected = _records()
_REC_LATIN = next(name[len("records/"):-4] + ".json" for name, data in _rec_files.items() if isinstance(data, bytes))

_CONVERT_SOLUTION = r"""python3 - <<'EOF'
import csv
import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

src, dst = Path("/app/records"), Path("/app/out")
rows = []
for path in sorted(src.rglob("*.xml")):
    records = []
    for rec in ET.parse(path).getroot().findall("record"):
        if rec.get("deleted") == "true":
            continue
        item = {"id": rec.get("id")}
        for field in rec.findall("field"):
            kind, text = field.get("type", "str"), field.text or ""
            if kind == "int":
                value = int(text)
            elif kind == "bool":
                value = text.strip() == "true"
            elif kind == "list":
                value = [i.text or "" for i in field.findall("item")]
            else:
                value = text
            item[field.get("name")] = value
        records.append(item)
    rel = path.relative_to(src).with_suffix(".json")
    target = dst / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(records, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    rows.append([rel.as_posix(), len(records), hashlib.sha256(target.read_bytes()).hexdigest()])
with open(dst / "manifest.csv", "w", newline="") as handle:
    out = csv.writer(handle)
    out.writerow(["path", "records", "sha256"])
    out.writerows(sorted(rows))
EOF
cat /app/out/manifest.csv
"""

_CONVERT_TESTS = f'''
import csv
import hashlib

EXPECTED = {_rec_expected!r}
LATIN = {_REC_LATIN!r}


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
'''

_CONVERT = Spec(
    task_id="mf-convert-records-manifest",
    title="Convert a tree of XML records to JSON with a manifest",
    difficulty="medium",
    category="multi-file",
    limits={"agent_timeout_s": 900},
    instruction="""
/app/records/ is a tree of XML files, each `<records>` with `<record id="...">` elements made of
`<field name="..." type="...">` values. Convert every file to JSON under /app/out/, keeping the folder structure
and the base name (`records/2023/q4/batch02.xml` becomes `out/2023/q4/batch02.json`):

- each file becomes a JSON array of objects, one per record in file order: `{"id": ..., <field name>: <value>, ...}`;
- a field's `type` says how to read it: `int` an integer, `bool` `true`/`false`, `list` its `<item>` children as
  strings (possibly none), anything else or no type a string (an empty element is `""`);
- records marked `deleted="true"` are left out;
- files may use any encoding their XML declaration names; write JSON in UTF-8.

Then write /app/out/manifest.csv with the header `path,records,sha256`: one row per JSON file, sorted by path
(relative to /app/out, with `/`), its number of records and the sha256 of the file as written. Leave
/app/records/ as it is.
""",
    files=_rec_files,
    tests=_CONVERT_TESTS,
    weights={"test_one_json_file_per_xml_file": 1.0, "test_records_and_types": 2.0, "test_latin1_file_decoded": 1.0,
             "test_manifest": 1.5},
    guards=["test_records_unchanged"],
    solution=_CONVERT_SOLUTION,
    tags=["xml", "json", "encoding", "manifest", "binary-fixture", "multi-file"],
)


# --------------------------------------------------------------------------------------------------------------
# 5. mf-sync-translations: bring several locale catalogues in line with the source catalogue, with a report.

_EN = {
    "app.title": "Ledger", "nav.home": "Home", "nav.reports": "Reports", "nav.settings": "Settings",
    "greeting": "Hello, {name}!", "items.count": "{count} items in {folder}", "error.network": "Network error",
    "error.quota": "You used {used} of {limit}", "button.save": "Save", "button.cancel": "Cancel",
    "export.done": "Exported {count} rows to {file}", "footer.legal": "All rights reserved",
}
_LOCALES = {
    "de": {"app.title": "Ledger", "nav.home": "Start", "nav.reports": "Berichte", "greeting": "Hallo, {name}!",
           "items.count": "{count} Einträge", "error.network": "Netzwerkfehler", "button.save": "Speichern",
           "button.cancel": "Abbrechen", "export.done": "{count} Zeilen nach {file} exportiert", "nav.help": "Hilfe",
           "footer.legal": ""},
    "fr": {"app.title": "Ledger", "nav.home": "Accueil", "nav.reports": "Rapports", "nav.settings": "Réglages",
           "greeting": "Bonjour, {nom} !", "items.count": "{count} éléments dans {folder}",
           "error.quota": "Vous avez utilisé {used} sur {limit}", "button.save": "Enregistrer",
           "export.done": "{count} lignes exportées vers {file}", "old.banner": "Nouveau !", "legacy.tip": "Astuce"},
    "es": {"app.title": "Ledger", "nav.home": "Inicio", "nav.reports": "Informes", "nav.settings": "Ajustes",
           "greeting": "¡Hola, {name}!", "items.count": "{count} elementos en {folder}", "error.network": "Error de red",
           "error.quota": "Usaste {used} de {limit}", "button.save": "Guardar", "button.cancel": "Cancelar",
           "export.done": "Exportadas {count} filas a {file}", "footer.legal": "Todos los derechos reservados"},
}


def _placeholders(text: str) -> list[str]:
    import re

    return sorted(set(re.findall(r"\{(\w+)\}", text)))


def _sync(locale: dict[str, str]):
    out, report = {}, []
    for key in _EN:
        value = locale.get(key)
        if value is None:
            report.append([key, "missing"])
        elif value == "":
            report.append([key, "empty"])
            value = None
        elif _placeholders(value) != _placeholders(_EN[key]):
            report.append([key, "placeholders"])
            value = None
        if value is not None:
            out[key] = value
    for key in sorted(set(locale) - set(_EN)):
        report.append([key, "obsolete"])
    return out, sorted(report)


_SYNCED = {lang: _sync(values) for lang, values in _LOCALES.items()}

_SYNC_SOLUTION = r"""python3 - <<'EOF'
import csv
import json
import re
from pathlib import Path

folder = Path("/app/locales")
source = json.loads((folder / "en.json").read_text(encoding="utf-8"))
marks = lambda text: sorted(set(re.findall(r"\{(\w+)\}", text)))
rows = []
for path in sorted(folder.glob("*.json")):
    lang = path.stem
    if lang == "en":
        continue
    catalogue = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for key in source:
        value = catalogue.get(key)
        if value is None:
            rows.append([lang, key, "missing"])
        elif value == "":
            rows.append([lang, key, "empty"])
        elif marks(value) != marks(source[key]):
            rows.append([lang, key, "placeholders"])
        else:
            out[key] = value
    rows += [[lang, key, "obsolete"] for key in catalogue if key not in source]
    path.write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
with open("/app/translation_report.csv", "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["locale", "key", "problem"])
    writer.writerows(sorted(rows))
EOF
cat /app/translation_report.csv
"""

_SYNC_TESTS = f'''
import csv

EN = {_EN!r}
SYNCED = {_SYNCED!r}


def test_catalogues_keep_only_good_translations():
    for lang, (values, _) in SYNCED.items():
        got = json.loads(Path(f"/app/locales/{{lang}}.json").read_text(encoding="utf-8"))
        assert got == values, lang


def test_catalogues_follow_source_key_order():
    for lang in SYNCED:
        got = list(json.loads(Path(f"/app/locales/{{lang}}.json").read_text(encoding="utf-8")))
        assert got == [key for key in EN if key in got] and got, lang


def test_report_rows():
    with open("/app/translation_report.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["locale", "key", "problem"]
    want = sorted([lang, key, problem] for lang, (_, report) in SYNCED.items() for key, problem in report)
    assert rows[1:] == want


def test_report_finds_placeholder_mismatches():
    with open("/app/translation_report.csv", newline="") as handle:
        rows = [r for r in csv.reader(handle) if r and r[-1] == "placeholders"]
    assert sorted(rows) == sorted([lang, key, "placeholders"] for lang, (_, report) in SYNCED.items()
                                  for key, problem in report if problem == "placeholders")


def test_source_catalogue_unchanged():
    assert unchanged("/app/locales/en.json")
'''

_SYNC = Spec(
    task_id="mf-sync-translations",
    held_out=True,
    title="Bring translation catalogues in line with their source",
    difficulty="medium",
    category="multi-file",
    limits={"agent_timeout_s": 900},
    instruction="""
/app/locales/en.json is the source catalogue (key -> English text); the other /app/locales/*.json files are
translations of it that drifted. For every translation catalogue:

- keep a key only if it is in en.json and its translation is good: present, not empty, and using exactly the same
  set of `{placeholder}` names as the English text;
- write the catalogue back in en.json's key order, UTF-8, non-ASCII characters as they are.

Also write /app/translation_report.csv with the header `locale,key,problem` and one row per problem, sorted
(by locale, then key, then problem): `missing` (in en.json, not in the catalogue), `empty`, `placeholders` (the
set of placeholder names differs), `obsolete` (in the catalogue, not in en.json). The locale is the file's base name
(`de`). Do not change en.json.
""",
    files={"locales/en.json": json.dumps(_EN, ensure_ascii=False, indent=2) + "\n",
           **{f"locales/{lang}.json": json.dumps(values, ensure_ascii=False, indent=2) + "\n" for lang, values in _LOCALES.items()}},
    tests=_SYNC_TESTS,
    weights={"test_catalogues_keep_only_good_translations": 2.0, "test_catalogues_follow_source_key_order": 0.5,
             "test_report_rows": 2.0, "test_report_finds_placeholder_mismatches": 1.0},
    guards=["test_source_catalogue_unchanged"],
    solution=_SYNC_SOLUTION,
    tags=["i18n", "json", "csv", "multi-file"],
)

TASKS: list[Spec] = [_RENAME, _SPLIT, _PIPELINE, _CONVERT, _SYNC]
