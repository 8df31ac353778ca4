#!/bin/bash
cd /app
for module in values functions executor plan planner tokens ast parser; do
  cp /solution/fixed/csvql/$module.py csvql/$module.py
done
python3 -m unittest discover -s unit_tests -t .
