#!/bin/bash
python3 /tests/check_report.py && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
