"""Packaging: installable projects with entry points, wheels and sdists with metadata, vendoring, broken
pyproject/setup.cfg files. Nothing can be downloaded: every build uses the image's setuptools."""

from __future__ import annotations

from _spec import Spec

# --------------------------------------------------------------------------------------------------------------
# package-quicknotes-cli: two loose scripts become an installable package with a console command.

_QN_STORE = '''"""The notes file: a JSON list of strings at $QUICKNOTES_FILE (default ~/.quicknotes.json)."""

import json
import os
from pathlib import Path


def notes_path():
    return Path(os.environ.get("QUICKNOTES_FILE", Path.home() / ".quicknotes.json"))


def load():
    path = notes_path()
    return json.loads(path.read_text()) if path.exists() else []


def save(notes):
    notes_path().write_text(json.dumps(notes, indent=1))
'''

_QN_NOTES = '''"""quicknotes: `add TEXT`, `list`, `search WORD` (case-insensitive), `remove N`."""

import argparse
import sys

import store


def main(argv=None):
    parser = argparse.ArgumentParser(prog="qn")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("add").add_argument("text")
    sub.add_parser("list")
    sub.add_parser("search").add_argument("word")
    sub.add_parser("remove").add_argument("number", type=int)
    args = parser.parse_args(argv)
    notes = store.load()
    if args.command == "add":
        notes.append(args.text)
        store.save(notes)
        print(f"added {len(notes)}")
    elif args.command == "list":
        for number, text in enumerate(notes, 1):
            print(f"{number} {text}")
    elif args.command == "search":
        for number, text in enumerate(notes, 1):
            if args.word.lower() in text.lower():
                print(f"{number} {text}")
    elif args.command == "remove":
        if not 1 <= args.number <= len(notes):
            print(f"no note {args.number}", file=sys.stderr)
            return 1
        del notes[args.number - 1]
        store.save(notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_QN_TESTS = r'''
import sys

PY = sys.executable


def _qn(tmp_path, *args, module=False):
    env = dict(os.environ, QUICKNOTES_FILE=str(tmp_path / "notes.json"), HOME=str(tmp_path))
    env.pop("PYTHONPATH", None)
    command = [PY, "-m", "quicknotes", *args] if module else ["qn", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=str(tmp_path), env=env)


def test_distribution_metadata():
    code = ("import importlib.metadata as m; print(m.version('quicknotes')); "
            "print([e.value for e in m.entry_points(group='console_scripts') if e.name == 'qn'])")
    result = run(PY, "-c", code, cwd="/")
    assert result.returncode == 0, result.stderr
    version, points = result.stdout.splitlines()
    assert version == "0.3.0"
    assert points.startswith("['quicknotes"), points


def test_qn_command(tmp_path):
    assert _qn(tmp_path, "add", "buy milk").returncode == 0
    assert _qn(tmp_path, "add", "Call Bob").returncode == 0
    assert _qn(tmp_path, "add", "bobsleigh tickets").returncode == 0
    assert _qn(tmp_path, "list").stdout == "1 buy milk\n2 Call Bob\n3 bobsleigh tickets\n"
    assert _qn(tmp_path, "search", "BOB").stdout == "2 Call Bob\n3 bobsleigh tickets\n"
    assert _qn(tmp_path, "remove", "1").returncode == 0
    assert _qn(tmp_path, "list").stdout == "1 Call Bob\n2 bobsleigh tickets\n"
    assert _qn(tmp_path, "remove", "9").returncode == 1


def test_python_m_quicknotes(tmp_path):
    assert _qn(tmp_path, "add", "via module", module=True).returncode == 0
    result = _qn(tmp_path, "list", module=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1 via module\n"


def test_regular_install_of_the_package():
    code = "import quicknotes.store, quicknotes.cli; print(quicknotes.store.__file__); print(quicknotes.cli.__file__)"
    result = run(PY, "-c", code, cwd="/")
    assert result.returncode == 0, result.stderr
    files = result.stdout.split()
    assert len(files) == 2 and not any(f.startswith("/app/") for f in files), files
'''

_QN_SOLUTION = r"""
set -e
cd /app/quicknotes
mkdir -p src/quicknotes
git mv notes.py src/quicknotes/cli.py 2>/dev/null || mv notes.py src/quicknotes/cli.py
mv store.py src/quicknotes/store.py
sed -i 's/^import store$/from quicknotes import store/' src/quicknotes/cli.py
printf '# Quick notes from the command line.\n__version__ = "0.3.0"\n' > src/quicknotes/__init__.py
cat > src/quicknotes/__main__.py <<'EOF'
import sys

from quicknotes.cli import main

sys.exit(main())
EOF
cat > pyproject.toml <<'EOF'
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "quicknotes"
version = "0.3.0"
description = "Quick notes from the command line"
requires-python = ">=3.9"

[project.scripts]
qn = "quicknotes.cli:main"

[tool.setuptools.packages.find]
where = ["src"]
EOF
# No index here: build with the installed setuptools.
pip install --no-build-isolation --no-index .
cd / && qn list
"""

# --------------------------------------------------------------------------------------------------------------
# release-tinyfmt-dists: a wheel and an sdist with the metadata the release notes ask for.

_TF_INIT = '''"""Fixed-width text tables."""

__version__ = "1.4.1"

from tinyfmt.table import render  # noqa: E402,F401
'''

_TF_TABLE = '''"""Render rows as a fixed-width table in one of the packaged templates (tinyfmt/templates/NAME.tmpl)."""

from importlib import resources


def load_template(name):
    """A template file holds ``key=value`` lines: ``sep`` (between columns) and ``rule`` (under the header)."""
    text = (resources.files("tinyfmt") / "templates" / f"{name}.tmpl").read_text()
    settings = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        settings[key] = value
    return settings


def render(rows, template="plain"):
    settings = load_template(template)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [settings["sep"].join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    rule = settings["sep"].join(settings["rule"] * w for w in widths) if settings.get("rule") else None
    if rule:
        lines.insert(1, rule)
    return "\\n".join(lines) + "\\n"
'''

_TF_CLI = '''"""tinyfmt [--template NAME] < rows.csv: print the CSV rows as a table (the first row is the header)."""

import argparse
import csv
import sys

from tinyfmt.table import render


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tinyfmt")
    parser.add_argument("--template", default="plain")
    args = parser.parse_args(argv)
    rows = [row for row in csv.reader(sys.stdin) if row]
    sys.stdout.write(render(rows, args.template))
    return 0
'''

_TF_RELEASE = """# Release checklist for tinyfmt 1.4.2

The release is two files in /app/dist, and nothing else there:

- the wheel `tinyfmt-1.4.2-py3-none-any.whl`
- the source distribution `tinyfmt-1.4.2.tar.gz`

Metadata of both:

- Name `tinyfmt`, Version `1.4.2`. The version has one source: `tinyfmt.__version__` in tinyfmt/__init__.py
  (bump it there).
- Summary: `Fixed-width text tables`
- Author `Ada Example`, author e-mail `ada@example.com`
- License MIT, with the classifier `License :: OSI Approved :: MIT License`
- Requires-Python `>=3.9`
- The long description is README.md, as `text/markdown`
- The console command `tinyfmt` runs `tinyfmt.cli:main`

Contents:

- the wheel holds the package with its templates (tinyfmt/templates/*.tmpl), and not the tests;
- the sdist holds README.md, LICENSE, the package with its templates, and tests/.
"""

_TF_FILES = {
    "tinyfmt/setup.py": 'from setuptools import setup\n\nsetup(name="tinyfmt", version="1.4", packages=["tinyfmt"])\n',
    "tinyfmt/tinyfmt/__init__.py": _TF_INIT,
    "tinyfmt/tinyfmt/table.py": _TF_TABLE,
    "tinyfmt/tinyfmt/cli.py": _TF_CLI,
    "tinyfmt/tinyfmt/templates/plain.tmpl": "sep=  \nrule=\n",
    "tinyfmt/tinyfmt/templates/grid.tmpl": "sep= | \nrule=-\n",
    "tinyfmt/tests/__init__.py": "",
    "tinyfmt/tests/test_table.py": ('import unittest\n\nfrom tinyfmt import render\n\n\nclass RenderTest(unittest.TestCase):\n'
                                    '    def test_grid(self):\n        self.assertEqual(render([["a", "bb"], ["ccc", "d"]], "grid"),\n'
                                    '                         "a   | bb\\n--- | --\\nccc | d\\n")\n'),
    "tinyfmt/README.md": "# tinyfmt\n\nFixed-width text tables from CSV rows:\n\n    tinyfmt --template grid < rows.csv\n",
    "tinyfmt/LICENSE": "MIT License\n\nCopyright (c) 2026 Ada Example\n\nPermission is hereby granted, free of charge, to any person obtaining a copy of this software.\n",
    "tinyfmt/RELEASE.md": _TF_RELEASE,
}

_TF_TESTS = r'''
import email
import sys
import tarfile
import zipfile

WHEEL = "/app/dist/tinyfmt-1.4.2-py3-none-any.whl"
SDIST = "/app/dist/tinyfmt-1.4.2.tar.gz"


def _metadata():
    with zipfile.ZipFile(WHEEL) as wheel:
        return email.message_from_bytes(wheel.read("tinyfmt-1.4.2.dist-info/METADATA"))


def test_wheel_metadata():
    meta = _metadata()
    assert meta["Name"] == "tinyfmt" and meta["Version"] == "1.4.2"
    assert meta["Summary"] == "Fixed-width text tables"
    assert meta["Author"] == "Ada Example" or "Ada Example" in (meta["Author-email"] or "")
    assert "ada@example.com" in (meta["Author-email"] or "")
    assert meta["Requires-Python"] == ">=3.9"
    assert "License :: OSI Approved :: MIT License" in meta.get_all("Classifier", [])
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "tinyfmt --template grid" in meta.get_payload()
    assert sorted(os.listdir("/app/dist")) == ["tinyfmt-1.4.2-py3-none-any.whl", "tinyfmt-1.4.2.tar.gz"]
    assert "1.4.2" in Path("/app/tinyfmt/tinyfmt/__init__.py").read_text()


def test_wheel_contents():
    with zipfile.ZipFile(WHEEL) as wheel:
        names = set(wheel.namelist())
        points = wheel.read("tinyfmt-1.4.2.dist-info/entry_points.txt").decode()
    assert {"tinyfmt/templates/plain.tmpl", "tinyfmt/templates/grid.tmpl", "tinyfmt/cli.py"} <= names
    assert not any(name.startswith("tests/") for name in names), sorted(names)
    assert "[console_scripts]" in points and "tinyfmt = tinyfmt.cli:main" in points.replace("=", " = ").replace("  ", " ")


def test_sdist_contents():
    with tarfile.open(SDIST) as tar:
        names = set(tar.getnames())
        pkg_info = tar.extractfile("tinyfmt-1.4.2/PKG-INFO").read().decode()
    for name in ("README.md", "LICENSE", "tests/test_table.py", "tinyfmt/templates/grid.tmpl", "tinyfmt/table.py"):
        assert f"tinyfmt-1.4.2/{name}" in names, name
    assert "Version: 1.4.2" in pkg_info and "Requires-Python: >=3.9" in pkg_info


def test_wheel_installs_and_runs(tmp_path):
    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)).returncode == 0
    install = run(str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps", WHEEL, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    result = subprocess.run([str(venv / "bin" / "tinyfmt"), "--template", "grid"], input="id,name\n7,Ada\n1234,Bo\n",
                            capture_output=True, text=True, cwd="/", timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "id   | name\n---- | ----\n7    | Ada\n1234 | Bo\n"
'''

_TF_SOLUTION = r"""
set -e
cd /app/tinyfmt
sed -i 's/^__version__ = "1.4.1"$/__version__ = "1.4.2"/' tinyfmt/__init__.py
cat > setup.py <<'EOF'
from pathlib import Path
import re

from setuptools import setup

HERE = Path(__file__).parent
VERSION = re.search(r'^__version__ = "([^"]+)"', (HERE / "tinyfmt" / "__init__.py").read_text(), re.M).group(1)

setup(
    name="tinyfmt",
    version=VERSION,
    description="Fixed-width text tables",
    long_description=(HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    author="Ada Example",
    author_email="ada@example.com",
    license="MIT",
    classifiers=["Programming Language :: Python :: 3", "License :: OSI Approved :: MIT License"],
    python_requires=">=3.9",
    packages=["tinyfmt"],
    package_data={"tinyfmt": ["templates/*.tmpl"]},
    entry_points={"console_scripts": ["tinyfmt = tinyfmt.cli:main"]},
)
EOF
cat > MANIFEST.in <<'EOF'
include README.md LICENSE
recursive-include tests *.py
recursive-include tinyfmt/templates *.tmpl
EOF
rm -rf /app/dist build *.egg-info
mkdir -p /app/dist
pip wheel --no-build-isolation --no-index --no-deps -w /app/dist .
python3 setup.py -q sdist -d /app/dist
rm -rf build *.egg-info
ls /app/dist
"""

# --------------------------------------------------------------------------------------------------------------
# vendor-colfmt: a shared library the app imports is vendored into the app.

_CF_INIT = '''"""colfmt: column formatting."""

__version__ = "2.1.0"

from colfmt.render import render  # noqa: E402,F401
from colfmt.widths import column_widths  # noqa: E402,F401
'''

_CF_WIDTHS = '''def column_widths(rows):
    """The widest cell of every column."""
    return [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]


def is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True
'''

_CF_RENDER = '''from colfmt.widths import column_widths, is_number


def render(rows):
    """Text columns left-aligned, number columns right-aligned, two spaces apart."""
    widths = column_widths(rows)
    out = []
    for row in rows:
        cells = [str(c).rjust(w) if is_number(str(c)) else str(c).ljust(w) for c, w in zip(row, widths)]
        out.append("  ".join(cells).rstrip())
    return "\\n".join(out) + "\\n"
'''

_RP_MAIN = '''"""python3 -m reporter FILE.csv: print the CSV as aligned columns."""

import csv
import sys

from colfmt import render


def main(argv):
    with open(argv[0], newline="") as handle:
        rows = [row for row in csv.reader(handle) if row]
    sys.stdout.write(render(rows))
    return 0


sys.exit(main(sys.argv[1:]))
'''

_CF_LICENSE = "colfmt 2.1.0\nCopyright (c) 2024 The colfmt authors\n\nRedistribution with or without modification is permitted provided this notice is kept.\n"

_VENDOR_FILES = {
    "reporter/reporter/__init__.py": '"""Aligned CSV reports."""\n',
    "reporter/reporter/__main__.py": _RP_MAIN,
    "shared-libs/colfmt/__init__.py": _CF_INIT,
    "shared-libs/colfmt/widths.py": _CF_WIDTHS,
    "shared-libs/colfmt/render.py": _CF_RENDER,
    "shared-libs/colfmt/LICENSE": _CF_LICENSE,
}

_VENDOR_TESTS = r'''
import csv
import random
import sys

DRIVER = """
import runpy, sys
sys.argv = ["reporter", sys.argv[1]]
try:
    runpy.run_module("reporter", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print("MODULES", sorted(m for m in sys.modules if "colfmt" in m))
"""


def _csv(tmp_path, seed):
    rng = random.Random(seed)
    rows = [["name", "qty", "price", "note"]]
    for _ in range(25):
        rows.append([rng.choice(["bolt", "nut", "washer", "gear"]) + str(rng.randrange(99)), str(rng.randrange(10000)),
                     f"{rng.uniform(0, 500):.2f}", rng.choice(["", "rush", "n/a", "x" * rng.randrange(12)])])
    path = tmp_path / f"in{seed}.csv"
    with open(path, "w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def _expected(path):
    env = dict(os.environ, PYTHONPATH="/app/shared-libs")
    code = "import csv, sys; from colfmt import render; sys.stdout.write(render([r for r in csv.reader(open(sys.argv[1], newline='')) if r]))"
    return subprocess.run([sys.executable, "-I", "-c", code.replace("import csv", "import sys; sys.path.insert(0, '/app/shared-libs'); import csv"), str(path)],
                          capture_output=True, text=True, env=env, timeout=30).stdout


def _deployed(*args):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd="/app/reporter", env=env, timeout=30)


def test_runs_without_shared_libs(tmp_path):
    for seed in (1, 2):
        path = _csv(tmp_path, seed)
        expected = _expected(path)
        assert expected.count("\n") == 26
        result = _deployed("-m", "reporter", str(path))
        assert result.returncode == 0, result.stderr
        assert result.stdout == expected


def test_only_the_vendored_copy_is_imported(tmp_path):
    path = _csv(tmp_path, 3)
    result = _deployed("-c", DRIVER, str(path))
    assert result.returncode == 0, result.stderr
    modules = result.stdout.splitlines()[-1]
    assert "'reporter._vendor.colfmt.render'" in modules and "'reporter._vendor.colfmt.widths'" in modules, modules
    assert "'colfmt'" not in modules and "'colfmt." not in modules, modules


def test_vendor_record():
    vendored = Path("/app/reporter/reporter/_vendor")
    assert (vendored / "colfmt" / "LICENSE").read_bytes() == Path("/app/shared-libs/colfmt/LICENSE").read_bytes()
    lines = [line.strip() for line in (vendored / "vendor.txt").read_text().splitlines()]
    assert "colfmt==2.1.0" in lines


def test_shared_libs_unchanged():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/shared-libs/"):
            assert unchanged(path), path
'''

_VENDOR_SOLUTION = r"""
set -e
V=/app/reporter/reporter/_vendor
mkdir -p $V
touch $V/__init__.py
cp -r /app/shared-libs/colfmt $V/colfmt
rm -rf $V/colfmt/__pycache__
# Inside the vendored copy the package is no longer top-level: its own imports become relative.
sed -i 's/^from colfmt\.\([a-z]*\) import/from .\1 import/' $V/colfmt/*.py
echo "colfmt==2.1.0" > $V/vendor.txt
sed -i 's/^from colfmt import render$/from reporter._vendor.colfmt import render/' /app/reporter/reporter/__main__.py
cd /app/reporter && env -u PYTHONPATH python3 -m reporter /dev/null
"""

# --------------------------------------------------------------------------------------------------------------
# fix-chronokit-pyproject: a pyproject.toml with many mistakes.

_CK_PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build-meta"

[project]
name = "chronokit"
dynamic = ["version"]
description = "Human-readable durations"
readme = "README.md"
requires-python = 3.9

[project.scripts]
chrono = "chronokit.cli.main"

[tool.setuptools]
packages = ["chronokit"]

[tool.setuptools.dynamic]
version = {attr = "chronokit.VERSION"}
"""

_CK_INIT = '"""Human-readable durations."""\n\n__version__ = "2.0.1"\n'

_CK_UNITS = '''"""The units, largest first, from the packaged data file chronokit/data/units.json."""

import json
from importlib import resources


def units():
    return json.loads((resources.files("chronokit") / "data" / "units.json").read_text())


def humanize(seconds):
    parts = []
    for unit in units():
        count, seconds = divmod(seconds, unit["seconds"])
        if count:
            parts.append(f"{count}{unit['symbol']}")
    return " ".join(parts) or "0s"
'''

_CK_CLI = '''"""chrono SECONDS: print a duration like 1d 1h 1m 1s; chrono --units: list the units."""

import sys

from chronokit.units import humanize, units


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if args == ["--units"]:
        for unit in units():
            print(f"{unit['symbol']} {unit['seconds']}")
        return 0
    if len(args) != 1 or not args[0].isdigit():
        print("usage: chrono SECONDS | chrono --units", file=sys.stderr)
        return 2
    print(humanize(int(args[0])))
    return 0
'''

_CK_FILES = {
    "chronokit/pyproject.toml": _CK_PYPROJECT,
    "chronokit/README.md": "# chronokit\n\n`chrono 90061` prints `1d 1h 1m 1s`.\n",
    "chronokit/src/chronokit/__init__.py": _CK_INIT,
    "chronokit/src/chronokit/units.py": _CK_UNITS,
    "chronokit/src/chronokit/cli.py": _CK_CLI,
    "chronokit/src/chronokit/data/units.json": ('[{"symbol": "w", "seconds": 604800}, {"symbol": "d", "seconds": 86400},\n'
                                               ' {"symbol": "h", "seconds": 3600}, {"symbol": "m", "seconds": 60},\n'
                                               ' {"symbol": "s", "seconds": 1}]\n'),
}

_CK_TESTS = r'''
import shutil
import sys

import pytest


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    # A fresh copy of the project, installed (no build isolation: nothing can be downloaded) into a fresh venv.
    root = tmp_path_factory.mktemp("ck")
    shutil.copytree("/app/chronokit", root / "src", ignore=shutil.ignore_patterns("build", "*.egg-info", "dist"))
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env)], check=True, timeout=120)
    install = run(str(env / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-build-isolation", str(root / "src"),
                  timeout=300)
    return env, install


def _chrono(venv, *args):
    return subprocess.run([str(venv[0] / "bin" / "chrono"), *args], capture_output=True, text=True, cwd="/", timeout=30)


def test_project_installs(venv):
    env, install = venv
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    result = run(str(env / "bin" / "python"), "-c", "import chronokit, sys; print(chronokit.__file__)", cwd="/")
    assert result.returncode == 0 and result.stdout.startswith(str(env)), result.stdout + result.stderr
    assert (env / "bin" / "chrono").is_file(), "no chrono command in the venv"


def test_metadata(venv):
    code = "import importlib.metadata as m; d = m.metadata('chronokit'); print(d['Version']); print(d['Requires-Python'])"
    result = run(str(venv[0] / "bin" / "python"), "-c", code, cwd="/")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["2.0.1", ">=3.9"]


def test_chrono_command(venv):
    assert _chrono(venv, "90061").stdout == "1d 1h 1m 1s\n"
    assert _chrono(venv, "1209659").stdout == "2w 59s\n"
    assert _chrono(venv, "0").stdout == "0s\n"
    assert _chrono(venv, "soon").returncode == 2


def test_packaged_units_data(venv):
    result = _chrono(venv, "--units")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "w 604800\nd 86400\nh 3600\nm 60\ns 1\n"
'''

_CK_SOLUTION = r"""
set -e
cd /app/chronokit
cat > pyproject.toml <<'EOF'
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "chronokit"
dynamic = ["version"]
description = "Human-readable durations"
readme = "README.md"
requires-python = ">=3.9"

[project.scripts]
chrono = "chronokit.cli:main"

[tool.setuptools]
package-dir = {"" = "src"}
packages = ["chronokit"]

[tool.setuptools.package-data]
chronokit = ["data/*.json"]

[tool.setuptools.dynamic]
version = {attr = "chronokit.__version__"}
EOF
python3 -m venv --system-site-packages /tmp/ck-venv
/tmp/ck-venv/bin/pip install --no-index --no-build-isolation .
cd / && /tmp/ck-venv/bin/chrono 90061 && /tmp/ck-venv/bin/chrono --units
rm -rf /tmp/ck-venv /app/chronokit/build /app/chronokit/src/*.egg-info
"""

# --------------------------------------------------------------------------------------------------------------
# acme-namespace-plugins: two distributions sharing a namespace package, plugins found through entry points.

_ACME_README = """# acme-core

`acme-run --list` prints the names of the installed plugins, sorted, one a line; `acme-run NAME TEXT` prints
what plugin NAME returns for TEXT.

A plugin is any callable taking and returning a str, published by any distribution as an entry point in the
group `acme.plugins` (the entry point's name is the plugin's name).

`acme` is a namespace package (PEP 420): acme-core provides `acme.core`, other distributions add their own
subpackages (`acme.extra`, ...), each possibly installed in a different directory of sys.path. No
distribution may ship `acme/__init__.py`.
"""

_ACME_CLI = '''import sys
from importlib.metadata import entry_points


def plugins():
    return {point.name: point for point in entry_points(group="acme.plugins")}


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    found = plugins()
    if args == ["--list"]:
        for name in sorted(found):
            print(name)
        return 0
    if len(args) != 2 or args[0] not in found:
        print(f"usage: acme-run --list | acme-run NAME TEXT (plugins: {', '.join(sorted(found)) or 'none'})",
              file=sys.stderr)
        return 2
    print(found[args[0]].load()(args[1]))
    return 0
'''

_ACME_FILES = {
    "acme-core/README.md": _ACME_README,
    "acme-core/setup.py": "from setuptools import setup\n\nsetup()\n",
    "acme-core/setup.cfg": ("[metadata]\nname = acme-core\nversion = 3.0.0\n\n[options]\npackages = find:\n\n"
                            "[options.entry_points]\nconsole_scripts =\n    acme-run = acme.core.cli:main\n"),
    "acme-core/acme/__init__.py": '"""The acme namespace."""\n',
    "acme-core/acme/core/__init__.py": '"""acme core: the plugin runner."""\n',
    "acme-core/acme/core/cli.py": _ACME_CLI,
    "acme-extra/setup.py": "from setuptools import setup\n\nsetup()\n",
    "acme-extra/setup.cfg": ("[metadata]\nname = acme-extra\nversion = 1.1.0\n\n[options]\npackages = find:\n\n"
                             "[options.entry_points]\nacme_plugins =\n    upper = acme.extra.plugins:upper_case\n"
                             "    reverse = acme.extra.plugins:reverse\n"),
    "acme-extra/acme/extra/__init__.py": '"""Extra acme plugins."""\n',
    "acme-extra/acme/extra/plugins.py": ('def upper(text):\n    return text.upper()\n\n\n'
                                         'def reverse(text):\n    return text[::-1]\n'),
}

_ACME_TESTS = r'''
import shutil
import sys
import zipfile

import pytest


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("acme")
    for name in ("acme-core", "acme-extra"):
        shutil.copytree(f"/app/{name}", root / name, ignore=shutil.ignore_patterns("build", "*.egg-info", "dist"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    wheels = root / "wheels"
    results = [run(*pip, "wheel", "--no-index", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(root / name),
                   timeout=180) for name in ("acme-core", "acme-extra")]
    results.append(run(*pip, "install", "--no-index", "--no-build-isolation", str(root / "acme-core"), timeout=180))
    return root, venv, wheels, results


def _acme_run(built, *args, env=None):
    return subprocess.run([str(built[1] / "bin" / "acme-run"), *args], capture_output=True, text=True, cwd="/",
                          timeout=30, env=env)


def _wheel_names(built, prefix):
    [wheel] = list(built[2].glob(f"{prefix}-*.whl"))
    return set(zipfile.ZipFile(wheel).namelist())


def test_namespace_wheels(built):
    for result in built[3]:
        assert result.returncode == 0, result.stdout[-1500:] + result.stderr[-1500:]
    core, extra = _wheel_names(built, "acme_core"), _wheel_names(built, "acme_extra")
    assert "acme/core/cli.py" in core and "acme/extra/plugins.py" in extra
    assert "acme/__init__.py" not in core and "acme/__init__.py" not in extra


def test_plugins_in_the_same_environment(built):
    install = run(str(built[1] / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-build-isolation",
                  str(built[0] / "acme-extra"), timeout=180)
    assert install.returncode == 0, install.stderr[-2000:]
    result = _acme_run(built, "--list")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "reverse\nupper\n"
    assert _acme_run(built, "upper", "Hello plugins").stdout == "HELLO PLUGINS\n"
    assert _acme_run(built, "reverse", "stressed").stdout == "desserts\n"


def test_plugins_from_another_directory(built, tmp_path):
    # acme-extra in its own directory on PYTHONPATH, acme-core in the venv: the namespace spans both.
    target = tmp_path / "plugins"
    [wheel] = list(built[2].glob("acme_extra-*.whl"))
    install = run(sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--target", str(target), str(wheel),
                  timeout=180)
    assert install.returncode == 0, install.stderr[-2000:]
    run(str(built[1] / "bin" / "python"), "-m", "pip", "uninstall", "-y", "acme-extra", timeout=120)
    env = dict(os.environ, PYTHONPATH=str(target))
    assert _acme_run(built, "--list", env=env).stdout == "reverse\nupper\n"
    result = _acme_run(built, "upper", "split", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "SPLIT\n"
'''

_ACME_SOLUTION = r"""
set -e
cd /app
# PEP 420: no acme/__init__.py anywhere, and setuptools must look for namespace packages.
rm -f acme-core/acme/__init__.py
sed -i 's/^packages = find:$/packages = find_namespace:/' acme-core/setup.cfg acme-extra/setup.cfg
printf '\n[options.packages.find]\ninclude = acme.*\n' >> acme-core/setup.cfg
printf '\n[options.packages.find]\ninclude = acme.*\n' >> acme-extra/setup.cfg
# The group acme-core reads, and the function that exists.
sed -i 's/^acme_plugins =$/acme.plugins =/; s/acme.extra.plugins:upper_case/acme.extra.plugins:upper/' acme-extra/setup.cfg
python3 -m venv --system-site-packages /tmp/acme-venv
/tmp/acme-venv/bin/pip install --no-index --no-build-isolation ./acme-core ./acme-extra
/tmp/acme-venv/bin/acme-run --list
/tmp/acme-venv/bin/acme-run upper ok
rm -rf /tmp/acme-venv acme-core/build acme-extra/build acme-core/*.egg-info acme-extra/*.egg-info
"""

TASKS: list[Spec] = [
    Spec(
        task_id="package-quicknotes-cli",
        title="Turn two scripts into an installable package with a console command",
        difficulty="medium",
        category="packaging",
        instruction="""
/app/quicknotes holds a small note-taking tool as two loose scripts: `python3 notes.py add TEXT | list |
search WORD | remove N`, which imports `store.py` (notes are kept in the JSON file $QUICKNOTES_FILE).

Make it a proper Python project and install it into the system Python (a regular install, not editable;
there is no package index, nothing can be downloaded):
- distribution name `quicknotes`, version `0.3.0`;
- an import package `quicknotes` with the modules `quicknotes.cli` (the command line, `main()`) and
  `quicknotes.store`;
- a console command `qn` that behaves exactly as `notes.py` does, and `python3 -m quicknotes ...` doing the same.
Both must work from any directory.
""",
        files={"quicknotes/notes.py": _QN_NOTES, "quicknotes/store.py": _QN_STORE},
        tests=_QN_TESTS,
        weights={"test_distribution_metadata": 1.0, "test_qn_command": 1.5, "test_python_m_quicknotes": 0.5,
                 "test_regular_install_of_the_package": 1.0},
        outputs=["/usr/local/bin/qn"],
        solution=_QN_SOLUTION,
        harbor=True,
        tags=["python", "packaging", "entry-points", "pip"],
        limits={"agent_timeout_s": 900, "test_timeout_s": 400},
    ),
    Spec(
        task_id="release-tinyfmt-dists",
        title="Build a wheel and an sdist with the release metadata",
        difficulty="medium",
        category="packaging",
        instruction="""
/app/tinyfmt is a small Python library with a command line (`tinyfmt`). Prepare its 1.4.2 release as
/app/tinyfmt/RELEASE.md describes: build the wheel and the source distribution into /app/dist with exactly
the metadata and contents listed there.

There is no package index and no network (the `build` frontend is not installed either): use what the system
Python has.
""",
        files=_TF_FILES,
        tests=_TF_TESTS,
        weights={"test_wheel_metadata": 1.0, "test_wheel_contents": 1.0, "test_sdist_contents": 1.0,
                 "test_wheel_installs_and_runs": 1.0},
        solution=_TF_SOLUTION,
        tags=["python", "packaging", "wheel", "sdist", "metadata"],
        limits={"agent_timeout_s": 1200, "test_timeout_s": 600},
    ),
    Spec(
        task_id="vendor-colfmt",
        title="Vendor a shared library into an application",
        difficulty="medium",
        category="packaging",
        instruction="""
`python3 -m reporter FILE.csv` (run in /app/reporter) prints a CSV file as aligned columns. It imports the
library `colfmt`, which it finds only because PYTHONPATH points at /app/shared-libs. The deployment target has
neither /app/shared-libs nor PYTHONPATH, so vendor colfmt into the application:

- put a copy of the package at /app/reporter/reporter/_vendor/colfmt (with its LICENSE file), and make the
  application and the vendored copy import only that copy: nothing may import a top-level `colfmt` any more;
- record what was vendored in /app/reporter/reporter/_vendor/vendor.txt, one `name==version` line per package
  (the version is the one colfmt declares);
- the output must stay exactly the same.

Leave /app/shared-libs as it is (other programs use it).
""",
        files=_VENDOR_FILES,
        steps=["ENV PYTHONPATH=/app/shared-libs"],
        tests=_VENDOR_TESTS,
        weights={"test_runs_without_shared_libs": 1.5, "test_only_the_vendored_copy_is_imported": 1.0,
                 "test_vendor_record": 0.5},
        guards=["test_shared_libs_unchanged"],
        outputs=["reporter/reporter/_vendor/__init__.py", "reporter/reporter/_vendor/colfmt/__init__.py", "reporter/reporter/_vendor/colfmt/LICENSE", "reporter/reporter/_vendor/vendor.txt"],
        solution=_VENDOR_SOLUTION,
        held_out=True,
        tags=["python", "vendoring", "imports"],
        limits={"agent_timeout_s": 900, "test_timeout_s": 300},
    ),
    Spec(
        task_id="fix-chronokit-pyproject",
        title="Repair a broken pyproject.toml",
        difficulty="medium",
        category="packaging",
        instruction="""
/app/chronokit is a Python project (a src layout: src/chronokit) with a command `chrono SECONDS` that prints
durations like `1d 1h 1m 1s`, and `chrono --units`, which lists the units from the data file shipped inside the
package (chronokit/data/units.json). Its pyproject.toml is broken: the project does not install.

Fix /app/chronokit so that `pip install --no-build-isolation /app/chronokit` (nothing can be downloaded here)
installs it into any fresh virtual environment made with `python3 -m venv --system-site-packages`, with:
the version taken from `chronokit.__version__` (2.0.1), Requires-Python `>=3.9`, the `chrono` command working
(including `--units`) from any directory.
""",
        files=_CK_FILES,
        tests=_CK_TESTS,
        weights={"test_project_installs": 1.0, "test_metadata": 1.0, "test_chrono_command": 1.0,
                 "test_packaged_units_data": 1.0},
        solution=_CK_SOLUTION,
        harbor=True,
        tags=["python", "packaging", "pyproject", "setuptools"],
        limits={"agent_timeout_s": 900, "test_timeout_s": 600},
    ),
    Spec(
        task_id="acme-namespace-plugins",
        title="Two distributions sharing a namespace package, with entry-point plugins",
        difficulty="medium",
        category="packaging",
        instruction="""
/app/acme-core and /app/acme-extra are two Python distributions (setup.cfg projects). acme-core provides the
`acme-run` command; acme-extra provides two plugins for it, `upper` and `reverse`. acme-core's README.md says
how plugins are found and how the `acme` package must be laid out.

Installed together, `acme-run --list` should print `reverse` and `upper`, and `acme-run upper hello` should
print `HELLO`, also when acme-extra is installed in a different directory of sys.path than acme-core. Today the
plugins are never found. Fix the two projects so that they build (`pip wheel --no-build-isolation`; nothing can
be downloaded) and work as the README describes.
""",
        files=_ACME_FILES,
        tests=_ACME_TESTS,
        weights={"test_namespace_wheels": 1.0, "test_plugins_in_the_same_environment": 1.0,
                 "test_plugins_from_another_directory": 1.5},
        solution=_ACME_SOLUTION,
        tags=["python", "packaging", "namespace-packages", "entry-points", "setup.cfg"],
        limits={"agent_timeout_s": 1200, "test_timeout_s": 900},
    ),
]
