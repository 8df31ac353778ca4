#!/bin/bash
cd /app
cp /solution/fixed/vm16/assembler.py /app/vm16/assembler.py
cp /solution/fixed/vm16/directives.py /app/vm16/directives.py
cp /solution/fixed/vm16/vm.py /app/vm16/vm.py
python3 -m unittest discover -s unit_tests -t .
python3 -m vm16 examples/fact.s
python3 -m vm16 examples/hello.s
