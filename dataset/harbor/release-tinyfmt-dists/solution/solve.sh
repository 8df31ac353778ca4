#!/bin/bash
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
