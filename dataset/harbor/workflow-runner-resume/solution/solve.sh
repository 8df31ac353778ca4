#!/bin/bash
cd /app
cp /solution/fixed/flowrun/dag.py /solution/fixed/flowrun/backoff.py /solution/fixed/flowrun/scheduler.py \
   /solution/fixed/flowrun/state.py flowrun/
python3 -m unittest discover -s unit_tests -t .
