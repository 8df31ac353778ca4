#!/bin/bash
cd /app
cp /solution/fixed/quill/lexer.py /app/quill/lexer.py
cp /solution/fixed/quill/values.py /app/quill/values.py
cp /solution/fixed/quill/parser.py /app/quill/parser.py
cp /solution/fixed/quill/interpreter.py /app/quill/interpreter.py
python3 -m unittest discover -s unit_tests -t .
python3 -m quill examples/primes.ql
