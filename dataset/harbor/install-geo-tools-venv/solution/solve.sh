#!/bin/bash
set -e
cd /app/projects
# geo-core keeps its package under src/.
sed -i 's|    packages=\["geo_core"\],|    package_dir={"": "src"},\n    packages=["geo_core"],|' geo-core/setup.py
# The CLI imports the package by its real name, and its entry point names the module that exists.
sed -i 's|^from geocore import|from geo_core import|' geo-cli/geo_cli/cli.py
sed -i 's|geodist=geo_cli.main:run|geodist=geo_cli.cli:main|' geo-cli/setup.py
# The venv sees the system's setuptools and wheel (nothing can be fetched here).
python3 -m venv --system-site-packages /app/venv
# geo-core is not on any index: install it first, then the CLI (regular installs, no build isolation).
/app/venv/bin/pip install --no-index --no-build-isolation ./geo-core
/app/venv/bin/pip install --no-index --no-build-isolation ./geo-cli
/app/venv/bin/geodist 52.52 13.405 48.8566 2.3522
