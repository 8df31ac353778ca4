#!/bin/bash
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
