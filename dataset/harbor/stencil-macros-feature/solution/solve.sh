#!/bin/bash
cd /app
cp /solution/fixed/stencil/compiler.py /app/stencil/compiler.py
cp /solution/fixed/stencil/expressions.py /app/stencil/expressions.py
cp /solution/fixed/stencil/filters.py /app/stencil/filters.py
cp /solution/fixed/stencil/nodes.py /app/stencil/nodes.py
cp /solution/fixed/stencil/parser.py /app/stencil/parser.py
cp /solution/fixed/stencil/runtime.py /app/stencil/runtime.py
python3 -m unittest discover -s unit_tests -t .
