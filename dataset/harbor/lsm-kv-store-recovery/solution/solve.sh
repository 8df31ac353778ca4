#!/bin/bash
cd /app
cp /solution/fixed/tinykv/wal.py /solution/fixed/tinykv/segment.py /solution/fixed/tinykv/compaction.py tinykv/
python3 -m unittest discover -s unit_tests -t .
