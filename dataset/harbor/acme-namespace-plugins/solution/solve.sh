#!/bin/bash
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
