#!/bin/bash
cd /app
cp /solution/fixed/jqlite/__init__.py /app/jqlite/__init__.py
cp /solution/fixed/jqlite/builtins.py /app/jqlite/builtins.py
cp /solution/fixed/jqlite/cli.py /app/jqlite/cli.py
cp /solution/fixed/jqlite/errors.py /app/jqlite/errors.py
cp /solution/fixed/jqlite/evaluator.py /app/jqlite/evaluator.py
cp /solution/fixed/jqlite/lexer.py /app/jqlite/lexer.py
cp /solution/fixed/jqlite/nodes.py /app/jqlite/nodes.py
cp /solution/fixed/jqlite/parser.py /app/jqlite/parser.py
cp /solution/fixed/jqlite/tokens.py /app/jqlite/tokens.py
python3 -m unittest discover -s unit_tests -t .
python3 -m jqlite -n -c --arg who Ada --argjson n 2 '$n as $k | {who: $who, k: $k, tail: ([1,2,3][-$k:])}'
