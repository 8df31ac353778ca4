#!/usr/bin/env bash
# The README's test command: set up this machine, then run every test layer it can run.
# Extra arguments go to pytest (e.g. bash scripts/test.sh -k images -x).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHON=${PYTHON:-$(command -v python3 || command -v python)}

bash scripts/setup.sh

# A full run goes in two phases: the suite in parallel workers (TEST_WORKERS, default 3: most of a test's time
# is spent waiting on containers and subprocesses), then the tests marked serial alone (they leave or sweep
# leaked sandboxes machine-wide, which would race the other workers). Extra arguments: one plain run.
run_pytest() {
    set +e
    "$PYTHON" -m pytest "$@"
    local code=$?
    set -e
    if [ "$code" -eq 5 ]; then
        echo "[test] error: pytest collected no tests (pytest $*)" >&2
        code=1
    fi
    return "$code"
}
status=0
if [ "$#" -eq 0 ] && [ "${TEST_WORKERS:-3}" != 1 ] && "$PYTHON" -c "import xdist" 2>/dev/null; then
    run_pytest tests -v -n "${TEST_WORKERS:-3}" --dist loadfile -m "not serial" || status=$?
    run_pytest tests -v -m serial || { code=$?; [ "$status" -ne 0 ] || status=$code; }
else
    run_pytest tests -v "$@" || status=$?
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
