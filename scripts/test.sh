#!/usr/bin/env bash
# The README's test command: set up this machine, then run every test layer it can run.
# Extra arguments go to pytest (e.g. bash scripts/test.sh -k images -x).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHON=${PYTHON:-$(command -v python3 || command -v python)}

bash scripts/setup.sh

set +e
"$PYTHON" -m pytest tests -v "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "[test] error: pytest collected no tests" >&2
    exit 1
fi
# The real rLLM (HEAD and v0.2.1, from the wheels) runs our classes; only on a full run.
if [ "$#" -eq 0 ]; then
    set +e
    bash scripts/test_rllm_conformance.sh
    conformance=$?
    set -e
    [ "$status" -ne 0 ] || status=$conformance
fi
exit "$status"
