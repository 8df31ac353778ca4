#!/bin/bash
# custom runner kept as written
pip install pytest >/dev/null 2>&1 || true
pytest $TEST_DIR/test_outputs.py -rA
