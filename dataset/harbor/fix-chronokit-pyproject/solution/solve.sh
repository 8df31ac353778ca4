#!/bin/bash
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
