#!/bin/bash
mkdir -p /logs/verifier
pytest /tests/test_state.py && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
