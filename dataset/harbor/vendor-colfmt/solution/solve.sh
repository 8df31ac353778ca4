#!/bin/bash
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
